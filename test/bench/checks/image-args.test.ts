import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { IMAGE_USAGE, parseImageArgs } from "../../../src/bench/checks/image-args.ts";
import { ImageError } from "../../../src/bench/checks/image-error.ts";

describe("npm run image's command line", () => {
  it("no command, --help or -h asks for the usage", () => {
    assert.deepEqual(parseImageArgs([]), { command: "help" });
    assert.deepEqual(parseImageArgs(["--help"]), { command: "help" });
    assert.deepEqual(parseImageArgs(["smoke", "-h", "--port", "9"]), { command: "help" });
  });

  it("each command gets the flags it takes, the others left out", () => {
    assert.deepEqual(parseImageArgs(["base", "--mirror", "http://m/debian", "--force"]), {
      command: "base",
      mirror: "http://m/debian",
      force: true,
    });
    assert.deepEqual(parseImageArgs(["build", "--local-base", "--image", "x"]), {
      command: "build",
      localBase: true,
      base: undefined,
    });
    assert.deepEqual(parseImageArgs(["--port", "8400", "smoke"]), {
      command: "smoke",
      image: undefined,
      port: "8400",
    });
  });

  it("mistakes are one ImageError each, in the words the script has always printed", () => {
    const said = (argv: string[]) => {
      try {
        parseImageArgs(argv);
      } catch (err) {
        assert.ok(err instanceof ImageError, `got ${err}`);
        return err.message;
      }
      assert.fail(`${argv.join(" ")} was accepted`);
    };
    assert.equal(said(["bogus"]), "unknown command bogus: base, build or smoke (see --help)");
    assert.equal(said(["base", "build"]), "one command at a time, got base,build");
    assert.equal(said(["--bogus"]), "Unknown option '--bogus'; see npm run image -- --help");
    assert.equal(
      said(["smoke", "--port"]),
      "Option '--port <value>' argument missing; see npm run image -- --help",
    );
  });

  it("any one of the three commands with no flags is read as itself", () => {
    fc.assert(
      fc.property(fc.constantFrom("base", "build", "smoke"), (command) => {
        assert.equal(parseImageArgs([command]).command, command);
      }),
    );
  });

  it("the usage names every command and flag", () => {
    for (const word of ["base", "build", "smoke", "--local-base", "--base", "--mirror"])
      assert.match(IMAGE_USAGE, new RegExp(`\\n  ${word} `));
    for (const word of ["--force", "--image", "--port", "-h, --help"])
      assert.ok(IMAGE_USAGE.includes(`\n  ${word} `), word);
  });
});
