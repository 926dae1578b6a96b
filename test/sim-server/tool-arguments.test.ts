import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { toolArguments } from "../../src/sim-server/tool-arguments.ts";
import { validate } from "./schema-check.ts";

/** Schemas as agents send them, plus the corners the generator has to honour. */
const SCHEMAS: Record<string, Record<string, unknown>> = {
  weather: {
    type: "object",
    properties: {
      city: { type: "string", description: "City name" },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      days: { type: "integer", minimum: 1, maximum: 7 },
    },
    required: ["city"],
    additionalProperties: false,
  },
  shell: {
    type: "object",
    properties: {
      command: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 4 },
      timeout: { type: "number", exclusiveMinimum: 0, maximum: 30 },
      env: { type: "object", additionalProperties: { type: "string" } },
    },
    required: ["command", "timeout"],
  },
  nested: {
    type: "object",
    properties: {
      edits: {
        type: "array",
        minItems: 2,
        items: {
          type: "object",
          properties: {
            path: { type: "string", minLength: 12, maxLength: 20 },
            line: { type: "integer", minimum: 100, maximum: 100 },
            mode: { const: "replace" },
            dry: { type: "boolean" },
            note: { type: ["string", "null"] },
          },
          required: ["path", "line", "mode", "dry", "note"],
        },
      },
    },
    required: ["edits"],
  },
  refs: {
    type: "object",
    $defs: {
      point: {
        type: "object",
        properties: { x: { type: "number", multipleOf: 0.5 } },
        required: ["x"],
      },
    },
    properties: {
      from: { $ref: "#/$defs/point" },
      to: { $ref: "#/$defs/point" },
      tag: {
        anyOf: [
          { type: "integer", minimum: -5, maximum: -1 },
          { type: "string", maxLength: 3 },
        ],
      },
      both: {
        allOf: [
          { type: "object", properties: { a: { type: "null" } }, required: ["a"] },
          { properties: { b: { type: "boolean" } }, required: ["b"] },
        ],
      },
      pair: {
        type: "array",
        prefixItems: [{ type: "string" }, { type: "integer" }],
        minItems: 2,
        maxItems: 2,
      },
    },
    required: ["from", "to", "tag", "both", "pair"],
  },
  formats: {
    type: "object",
    properties: {
      when: { type: "string", format: "date-time" },
      id: { type: "string", format: "uuid" },
      mail: { type: "string", format: "email" },
    },
    required: ["when", "id", "mail"],
    minProperties: 3,
  },
  untyped: { properties: { q: {} }, required: ["q"] },
  empty: { type: "object", properties: {} },
};

describe("toolArguments", () => {
  it("fits every schema, for any key", () => {
    fc.assert(
      fc.property(fc.nat(), (key) => {
        for (const [name, schema] of Object.entries(SCHEMAS)) {
          const text = toolArguments(schema, key);
          const value = JSON.parse(text);
          assert.deepEqual(validate(value, schema), [], `${name}: ${text}`);
          assert.equal(typeof value, "object", `${name}: arguments are an object`);
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("is a pure function of schema and key, and varies with the key", () => {
    const a = toolArguments(SCHEMAS.weather, 7);
    assert.equal(toolArguments(SCHEMAS.weather, 7), a);
    const seen = new Set(Array.from({ length: 20 }, (_, k) => toolArguments(SCHEMAS.weather, k)));
    assert.ok(seen.size > 5, `arguments vary with the key: ${[...seen].join(" | ")}`);
  });

  it("always includes required keys and sometimes optional ones, never extra keys", () => {
    const keys = new Set<string>();
    for (let k = 0; k < 50; k++) {
      const value = JSON.parse(toolArguments(SCHEMAS.weather, k));
      assert.ok("city" in value);
      for (const key of Object.keys(value)) keys.add(key);
    }
    assert.deepEqual([...keys].sort(), ["city", "days", "unit"]);
  });

  it("prints the way Python's json.dumps does, and `{}` without a schema", () => {
    const text = toolArguments(SCHEMAS.refs, 3);
    assert.match(text, /^\{"from": \{"x": /);
    assert.ok(!/[^\\]",(?! )/.test(text), `", " separators: ${text}`);
    assert.equal(toolArguments(null, 1), "{}");
    assert.equal(toolArguments(SCHEMAS.empty, 1), "{}");
  });
});
