import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { spliceTopLevel } from "../../src/proxy/splice-body.ts";

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

test("splicing equals parsing, deleting and assigning, for any object in any layout", () => {
  // `__proto__` is left out: assigning it to the expected object would set its prototype.
  const key = fc
    .oneof(fc.constantFrom("program_id", "stream", 'a"b', "c\\\\", "é✓"), fc.string())
    .filter((k) => k !== "__proto__");
  fc.assert(
    fc.property(
      fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
      fc.constantFrom(undefined, 1, "\t", " \r\n "),
      fc.array(key, { maxLength: 3 }),
      fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }),
      (doc, indent, drop, put) => {
        const raw = Buffer.from(JSON.stringify(doc, null, indent as never));
        const expected: Record<string, unknown> = JSON.parse(raw.toString());
        for (const k of drop) delete expected[k];
        for (const [k] of put) delete expected[k];
        for (const [k, v] of put) expected[k] = JSON.parse(JSON.stringify(v ?? null));
        // Read from both ends by the key order, and from the front only: the same body.
        for (const keys of [Object.keys(doc), undefined]) {
          const out = spliceTopLevel(raw, new Set(drop), put, keys);
          assert.deepEqual(JSON.parse(out.toString()), expected);
          assert.deepEqual(Object.keys(JSON.parse(out.toString())), Object.keys(expected));
        }
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
});

test("every member with a removed key goes, duplicates and escaped spellings included", () => {
  const raw = Buffer.from(
    '{ "program_id" : "a", "messages":[{"content":"x\\"program_id\\": 1"}],\n"program\\u005fid":"b", "n":2 }',
  );
  const out = spliceTopLevel(raw, new Set(["program_id"]), [["stream", true]]);
  assert.equal(
    out.toString(),
    '{"messages":[{"content":"x\\"program_id\\": 1"}],"n":2,"stream":true}',
  );
  assert.equal(spliceTopLevel(Buffer.from("{ }"), new Set(), [["s", 1]]).toString(), '{"s":1}');
  assert.equal(spliceTopLevel(Buffer.from('{"a":1}'), new Set(["a"]), []).toString(), "{}");
});

test("a changed key given twice is removed everywhere, whichever end reads it", () => {
  const raw = Buffer.from(
    '{"program_id":"a","messages":[{"content":"x"}],"model":"m","program_id":"b"}',
  );
  const keys = Object.keys(JSON.parse(raw.toString()));
  const out = spliceTopLevel(raw, new Set(["program_id"]), [], keys).toString();
  assert.equal(out, '{"messages":[{"content":"x"}],"model":"m"}');
});

test("a member behind the conversation is read from the back, the conversation copied as it is", () => {
  const raw = Buffer.from(
    '{"messages": [{"role": "user", "content": "a \\"quoted\\" {[x]}"}], "model": "m",\n "program_id": "p", "stream": false}',
  );
  const keys = Object.keys(JSON.parse(raw.toString()));
  const out = spliceTopLevel(raw, new Set(["program_id"]), [["stream", true]], keys);
  assert.equal(
    out.toString(),
    '{{"messages": [{"role": "user", "content": "a \\"quoted\\" {[x]}"}], "model": "m","stream":true}'.slice(
      1,
    ),
  );
});
