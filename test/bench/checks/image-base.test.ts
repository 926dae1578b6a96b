import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { mirrorIn } from "../../../src/bench/checks/image-base.ts";

describe("mirrorIn: the Debian mirror apt is configured with", () => {
  it("reads a one-line sources.list, options in brackets or not", () => {
    assert.equal(
      mirrorIn(["deb http://ftp.fr.debian.org/debian bookworm main\n"]),
      "http://ftp.fr.debian.org/debian",
    );
    assert.equal(
      mirrorIn(["deb [arch=amd64 signed-by=/k.gpg] https://m.example/debian/ bookworm main"]),
      "https://m.example/debian",
    );
  });

  it("reads deb822 .sources and skips the security mirror", () => {
    const sources = [
      "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n",
      "Types: deb\nURIs: http://mirror.local/debian\nSuites: bookworm bookworm-updates\n",
    ];
    assert.equal(mirrorIn(sources), "http://mirror.local/debian");
  });

  it("falls back to deb.debian.org when no source names a Debian mirror", () => {
    assert.equal(mirrorIn([]), "http://deb.debian.org/debian");
    assert.equal(
      mirrorIn(["# deb http://old/debian bookworm main\n"]),
      "http://deb.debian.org/debian",
    );
  });

  it("finds any host's /debian in either format", () => {
    fc.assert(
      fc.property(fc.domain(), fc.boolean(), (host, deb822) => {
        const url = `http://${host}/debian`;
        const text = deb822 ? `Types: deb\nURIs: ${url}\n` : `deb ${url} bookworm main\n`;
        assert.equal(mirrorIn([text]), url);
      }),
    );
  });
});
