import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildArgs, chooseBase, IMAGE_TAGS } from "../../../src/bench/checks/image-build.ts";
import {
  CONTAINERFILE,
  LOCAL_BASE,
  PUBLIC_BASE,
  ROOT,
  VERSION,
} from "../../../src/bench/checks/image-refs.ts";

describe("the image build", () => {
  it("builds on --base, else the local base when asked for or present, else docker.io's", () => {
    const never = () => assert.fail("looked for the local base");
    assert.equal(chooseBase({ base: "my/node:24" }, never), "my/node:24");
    assert.equal(chooseBase({ localBase: true }, never), LOCAL_BASE);
    assert.equal(
      chooseBase({}, () => true),
      LOCAL_BASE,
    );
    assert.equal(
      chooseBase({}, () => false),
      PUBLIC_BASE,
    );
  });

  it("tags the package's version and latest, and builds the Containerfile in the repository", () => {
    assert.deepEqual(IMAGE_TAGS, [`localhost/maitred:${VERSION}`, "localhost/maitred:latest"]);
    const args = buildArgs("b:1");
    assert.deepEqual(args.slice(0, 7), [
      "build",
      "--format",
      "docker",
      "--build-arg",
      "BASE=b:1",
      "--build-arg",
      `VERSION=${VERSION}`,
    ]);
    assert.equal(args[args.indexOf("-f") + 1], CONTAINERFILE);
    assert.equal(args[args.indexOf("--ignorefile") + 1], `${CONTAINERFILE}.dockerignore`);
    assert.deepEqual(
      args.filter((_, i) => args[i - 1] === "-t"),
      IMAGE_TAGS,
    );
    assert.equal(args.at(-1), ROOT);
    assert.match(VERSION, /^\d+\.\d+\.\d+/);
  });
});
