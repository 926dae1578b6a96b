import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  parseScriptArgs,
  ScriptArgsError,
  type ScriptSpec,
  scriptErrorLine,
  scriptHelp,
  wantsHelp,
} from "../../src/bench/script-args.ts";
import { duration, integer, listOfItems, share } from "../../src/config/values.ts";

const SPEC = {
  name: "bench:demo",
  summary: "What a demo benchmark measures.",
  runtime: "about 4 s (timed by hand)",
  flags: {
    seeds: {
      arg: "<list>",
      default: "7,1",
      description: "seeds",
      check: listOfItems(integer(0, 100)),
    },
    concurrency: { arg: "<n>", default: "32", description: "programs", check: integer(1, 64) },
    share: { arg: "<x>", default: "0.5", description: "share streamed", check: share() },
    window: { arg: "<duration>", description: "steady window", check: duration() },
    jobs: { arg: "<n>", defaultText: "one per core", description: "runs at once" },
    json: { arg: "<file>", description: "write the runs as JSON" },
    quick: { type: "boolean", description: "a smoke run" },
    one: { description: "a child's run", hidden: true },
  },
} as const satisfies ScriptSpec;

/** The one line a mistake gives, or a failure saying what came instead. */
function problemOf(argv: string[], spec: ScriptSpec = SPEC): string {
  try {
    parseScriptArgs(spec, argv);
  } catch (err) {
    assert.ok(err instanceof ScriptArgsError, `want a ScriptArgsError, got ${err}`);
    assert.ok(!err.message.includes("\n"), `want one line, got ${JSON.stringify(err.message)}`);
    return err.message;
  }
  assert.fail(`want ${argv.join(" ")} refused, got it read`);
}

function read(argv: string[]) {
  const r = parseScriptArgs(SPEC, argv);
  assert.ok(!r.help, "want values, got help");
  return r;
}

describe("script flags", () => {
  it("without flags, every default applies, as text and as its check reads it", () => {
    const r = read([]);
    assert.equal(r.values.seeds, "7,1");
    assert.equal(r.values.concurrency, "32");
    assert.equal(r.values.quick, false);
    assert.equal(r.values.window, undefined);
    assert.equal(r.values.jobs, undefined);
    assert.deepEqual(r.parsed.seeds, [7, 1]);
    assert.equal(r.parsed.concurrency, 32);
    assert.equal(r.parsed.share, 0.5);
    assert.equal(r.parsed.window, undefined);
  });

  it("given flags keep their text and yield their checked value", () => {
    const r = read(["--seeds", "3", "--window=90s", "--quick", "--json", "out.json", "--jobs=2"]);
    assert.equal(r.values.seeds, "3");
    assert.deepEqual(r.parsed.seeds, [3]);
    assert.equal(r.values.window, "90s");
    assert.equal(r.parsed.window, 90_000);
    assert.equal(r.values.quick, true);
    assert.equal(r.values.json, "out.json");
    assert.equal(r.values.jobs, "2");
    assert.deepEqual(r.positionals, []);
  });

  it("--help and -h ask for help wherever they stand, even beside a mistake", () => {
    for (const argv of [["--help"], ["-h"], ["--seeds", "3", "-h"], ["--bogus", "--help"]])
      assert.deepEqual(parseScriptArgs(SPEC, argv), { help: true }, argv.join(" "));
    assert.equal(wantsHelp(["--", "--help"]), false, "after --, --help is an argument");
  });

  it("an unknown flag is named", () => {
    assert.equal(problemOf(["--bogus"]), "unknown flag --bogus");
    assert.equal(problemOf(["-x"]), "unknown flag -x");
  });

  it("a flag without its value says it needs one, also when a flag follows", () => {
    assert.equal(problemOf(["--concurrency"]), "--concurrency needs a value");
    assert.match(problemOf(["--concurrency", "--quick"]), /^--concurrency needs a value/);
    assert.match(problemOf(["--concurrency", "-1"]), /--concurrency=VALUE/);
  });

  it("a switch given a value is refused", () => {
    assert.equal(problemOf(["--quick=yes"]), "--quick takes no value");
  });

  it("a value that is not a number where one is needed names the flag and the value", () => {
    assert.equal(
      problemOf(["--concurrency", "many"]),
      '--concurrency: must be a number, got "many"',
    );
    assert.match(problemOf(["--seeds", "7,x"]), /^--seeds: .*got "7,x"$/);
  });

  it("a number out of its range is refused", () => {
    assert.match(problemOf(["--concurrency", "0"]), /^--concurrency: must be an integer/);
    assert.match(problemOf(["--share", "1.5"]), /^--share: must be between 0 and 1/);
    assert.match(problemOf(["--window", "0"]), /^--window: must be > 0/);
  });

  it("an argument without a flag is refused unless the script takes one", () => {
    assert.equal(problemOf(["extra"]), "unexpected argument extra");
    const relay = {
      name: "tcp-relay",
      usage: "node scripts/tcp-relay.ts <host:port>",
      summary: "A relay.",
      runtime: "until stopped",
      flags: {},
      positionals: [{ name: "<host:port>", description: "the upstream" }],
    } satisfies ScriptSpec;
    assert.equal(problemOf([], relay), "missing <host:port>");
    assert.equal(problemOf(["a:1", "b:2"], relay), "unexpected argument b:2");
    const r = parseScriptArgs(relay, ["127.0.0.1:8000"]);
    assert.ok(!r.help);
    assert.deepEqual(r.positionals, ["127.0.0.1:8000"]);
  });

  it("a default its own check refuses is the script's bug, not a user's mistake", () => {
    const broken = {
      ...SPEC,
      flags: { n: { default: "x", description: "n", check: integer(1, 2) } },
    } satisfies ScriptSpec;
    assert.throws(
      () => parseScriptArgs(broken, []),
      (e: unknown) => e instanceof Error && !(e instanceof ScriptArgsError),
    );
  });

  it("the error line names the script and points to --help", () => {
    assert.equal(
      scriptErrorLine(SPEC, "unknown flag --bogus"),
      "bench:demo: unknown flag --bogus; see --help",
    );
  });
});

describe("script help", () => {
  const help = scriptHelp(SPEC);

  it("starts with the npm usage line, what it measures and how long it takes", () => {
    const [usage, blank, summary, runtime] = help.split("\n");
    assert.equal(usage, "Usage: npm run bench:demo -- [flags]");
    assert.equal(blank, "");
    assert.equal(summary, SPEC.summary);
    assert.equal(runtime, `Default run: ${SPEC.runtime}`);
  });

  it("lists every flag but the hidden ones, each with its default", () => {
    const want: [string, string][] = [
      ["--seeds <list>", "(default: 7,1)"],
      ["--concurrency <n>", "(default: 32)"],
      ["--share <x>", "(default: 0.5)"],
      ["--window <duration>", "(default: none)"],
      ["--jobs <n>", "(default: one per core)"],
      ["--json <file>", "(default: none)"],
      ["--quick", "(default: off)"],
      ["-h, --help", "print this help"],
    ];
    for (const [flag, tail] of want) {
      const line = help.split("\n").find((l) => l.trimStart().startsWith(`${flag} `));
      assert.ok(line !== undefined, `no line for ${flag} in:\n${help}`);
      assert.ok(
        line.endsWith(tail),
        `${flag}: got ${JSON.stringify(line)}, want it to end ${tail}`,
      );
    }
    assert.ok(!help.includes("--one"), "a hidden flag is not listed");
  });

  it("names a script's arguments and its own usage line", () => {
    const relay = scriptHelp({
      name: "http-relay",
      usage: "node scripts/http-relay.ts <upstream-url>",
      summary: "A relay.",
      runtime: "until stopped",
      flags: {},
      positionals: [{ name: "<upstream-url>", description: "where requests go" }],
    });
    assert.ok(relay.startsWith("Usage: node scripts/http-relay.ts <upstream-url>\n"), relay);
    assert.match(relay, /\n {2}<upstream-url> +where requests go\n/);
  });
});
