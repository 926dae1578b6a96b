/**
 * The router's HTTP surface as one Hono app: the OpenAI routes that are proxied, and the admin
 * and observability routes. Every error, from any route, becomes the one error response in
 * `onError` via `toErrorResponse`, in the envelope of the route's dialect (the OpenAI one but on
 * the Anthropic Messages routes); no route has its own try/catch.
 */

import type { HttpBindings } from "@hono/node-server";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { LatestSample } from "../backends/backend-poller.ts";
import type { TailFields } from "../config/tail-preset.ts";
import { Errors, toErrorResponse } from "../errors.ts";
import type { Shadow } from "../shadow/shadow.ts";
import type { UiFeed } from "../ui/ui-feed.ts";
import { registerUi } from "../ui/ui-routes.ts";
import { type AccessEntry, createAccessEntry, isLogged, writeAccessLog } from "./access-log.ts";
import { checkAdmin } from "./admin-access.ts";
import {
  backendsJson,
  healthJson,
  holdJson,
  programJson,
  programsJson,
  shadowJson,
} from "./admin-views.ts";
import { alreadySent } from "./already-sent.ts";
import { handleCompletion } from "./completion/handle-completion.ts";
import { DIALECT_LIST, dialectOfPath } from "./dialects/all-dialects.ts";
import { listModels } from "./models-route.ts";
import { parseProgramId } from "./program-identity.ts";
import { scopedProgramId, splitProgramKey } from "./program-scope.ts";
import type { ProxyDeps } from "./proxy-deps.ts";
import { readBody } from "./read-body.ts";
import { requestIdOf } from "./request-id.ts";
import { createResponseHomes } from "./response-homes.ts";
import { passThrough } from "./responses-passthrough.ts";

export interface AppDeps extends ProxyDeps {
  latestSample(backendId: string): LatestSample | undefined;
  /** The bounds on waiting in force (`--tail` and its halves); null when nothing is paused. */
  bounds: TailFields | null;
  /** `--access-log on`: one line per finished request (access-log.ts). */
  accessLog: boolean;
  /** What the live page at /ui shows. */
  ui: UiFeed;
  /** `--shadow`: the tr core beside the router, whose decisions /shadow shows; null when off. */
  shadow: Shadow | null;
}

/** `/programs/release` bodies are one id; anything near this size is not one. */
const ADMIN_BODY_LIMIT = 64 * 1024;

/** An admin route's program: `:id` in the scope of `?tenant=` (none = an anonymous caller's). */
function adminKey(id: string, tenant: string | undefined): string {
  return scopedProgramId(tenant === undefined || tenant === "" ? null : tenant, id);
}

function describeKey(key: string): string {
  const { tenant, programId } = splitProgramKey(key);
  return tenant === null ? programId : `${programId} of tenant ${tenant}`;
}

type AppEnv = {
  Bindings: HttpBindings;
  Variables: { requestId: string; access: AccessEntry | null };
};

export function createApp(appDeps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Where each Responses response is stored, shared by the routes that make and read them.
  const deps: AppDeps = {
    ...appDeps,
    responseHomes: appDeps.responseHomes ?? createResponseHomes(),
  };
  const { loop } = deps;

  // The request id is set on the Node response itself: the relayed answers bypass Hono's, and
  // Node merges it into whatever head is written later. The access log's entry, filled on the way and written once the answer is over: a relayed
  // answer's status is the Node response's (written past Hono), any other the one Hono made.
  app.use(async (c, next) => {
    const id = requestIdOf(c.env.incoming.headers);
    c.set("requestId", id);
    c.env.outgoing.setHeader("x-request-id", id);
    const access = deps.accessLog && isLogged(c.req.path) ? createAccessEntry() : null;
    c.set("access", access);
    const start = deps.clock.now();
    // An error Hono's onError has not answered yet (a path no route matches throws past
    // this middleware) is logged with the answer it is about to get.
    let thrown: ReturnType<typeof toErrorResponse> | null = null;
    try {
      await next();
    } catch (err) {
      thrown = toErrorResponse(err);
      throw err;
    } finally {
      if (access !== null) {
        const out = c.env.outgoing;
        if (thrown !== null) access.errorCode = String(thrown.body.error.code);
        writeAccessLog(
          deps.logger,
          {
            id,
            method: c.req.method,
            path: c.req.path,
            status: out.headersSent
              ? out.statusCode
              : thrown !== null
                ? thrown.status
                : c.res.status,
            durationMs: deps.clock.now() - start,
          },
          access,
        );
      }
    }
  });

  // The generation APIs, one request path for all (handle-completion.ts), one route per
  // dialect: chat completions, completions, Anthropic Messages (Claude Code) and OpenAI
  // Responses (Codex, Agents SDK).
  for (const dialect of DIALECT_LIST) {
    app.post(dialect.path, async (c) => {
      const { incoming, outgoing } = c.env;
      await handleCompletion(
        deps,
        dialect,
        incoming,
        outgoing,
        c.get("requestId"),
        c.get("access"),
      );
      return alreadySent();
    });
  }
  // Their routes that generate nothing go to a backend as they are (responses-passthrough.ts);
  // a stored response's routes name it by `:id`.
  const passing = (stored: boolean) => async (c: Context<AppEnv>) => {
    const id = stored ? (c.req.param("id") as string) : null;
    await passThrough(deps, c.env.incoming, c.env.outgoing, c.get("requestId"), c.req.path, id);
    return alreadySent();
  };
  for (const dialect of DIALECT_LIST)
    for (const route of dialect.passThrough)
      app.on(route.method, route.path, passing(route.stored));
  app.get("/v1/models", async (c) => c.json(await listModels(deps)));

  // The admin routes (admin-access.ts): GET only, so releasing a program stays open to agents.
  for (const path of [
    "/programs",
    "/programs/:id",
    "/backends",
    "/profiles",
    "/profiles/:id",
    "/shadow",
  ]) {
    app.get(path, async (c, next) => {
      checkAdmin(c.env.incoming, deps.adminToken);
      await next();
    });
  }

  app.get("/programs", (c) => c.json(programsJson(loop.scheduler.snapshot())));
  app.get("/programs/:id", (c) => {
    const key = adminKey(c.req.param("id"), c.req.query("tenant"));
    const p = loop.scheduler.program(key);
    if (!p) throw Errors.notFound(`Program ${describeKey(key)} is not known.`, "program_id");
    return c.json({
      ...programJson(p),
      hold: holdJson(loop.scheduler.holdOf({ programId: key }), deps.clock.now()),
      profile: deps.profiler?.profile(key) ?? null,
    });
  });
  // An agent ends its own programs: the id is looked up in the caller's scope. Naming another
  // tenant's program (`tenant` in the body) is an admin act.
  app.post("/programs/release", async (c) => {
    const raw = await readBody(c.env.incoming, ADMIN_BODY_LIMIT);
    let doc: unknown;
    try {
      doc = JSON.parse(raw.toString("utf8") || "{}");
    } catch (err) {
      throw Errors.invalidJson((err as Error).message);
    }
    const fields = (typeof doc === "object" && doc !== null ? doc : {}) as Record<string, unknown>;
    const id = parseProgramId(fields.program_id, "program_id");
    if (id === null) throw Errors.badRequest("program_id is required", "program_id");
    let tenant = deps.callers.tenantOf(c.env.incoming.headers);
    if (fields.tenant !== undefined && fields.tenant !== null) {
      checkAdmin(c.env.incoming, deps.adminToken);
      if (typeof fields.tenant !== "string" || fields.tenant === "")
        throw Errors.badRequest("tenant must be a non-empty string", "tenant");
      tenant = fields.tenant;
    }
    const key = scopedProgramId(tenant, id);
    const known = loop.scheduler.program(key) !== undefined;
    loop.send({ kind: "program_release", now: deps.clock.now(), programId: key });
    return c.json({ program_id: id, ...(tenant === null ? {} : { tenant }), released: known });
  });

  // 503 while the cell takes no new programs: a balancer's check moves them elsewhere.
  app.get("/health", (c) => {
    const body = healthJson(
      loop.scheduler.snapshot(),
      deps.cell,
      deps.phase(),
      deps.profiler !== null,
      deps.shadow !== null,
    );
    return c.json(body, body.takes_new_programs ? 200 : 503);
  });
  app.get("/backends", (c) =>
    c.json(backendsJson(loop.scheduler.snapshot(), deps.latestSample, deps.bounds)),
  );
  app.get("/metrics", async (c) => {
    const text = await deps.metrics.render();
    return c.body(text, 200, { "content-type": deps.metrics.contentType });
  });
  // What the tr shadow would have done (admin: it names programs and their requests).
  app.get("/shadow", (c) => {
    if (deps.shadow === null)
      throw Errors.notFound("Shadow mode is off; start maitred with --shadow.");
    return c.json(shadowJson(deps.shadow.summary()));
  });
  app.get("/profiles", (c) => {
    if (!deps.profiler) throw Errors.badRequest("Profiling is off; start maitred with --profile.");
    return c.json(deps.profiler.profiles());
  });
  app.get("/profiles/:id", (c) => {
    if (!deps.profiler) throw Errors.badRequest("Profiling is off; start maitred with --profile.");
    const key = adminKey(c.req.param("id"), c.req.query("tenant"));
    const profile = deps.profiler.profile(key);
    if (!profile)
      throw Errors.notFound(`No profile for program ${describeKey(key)}.`, "program_id");
    return c.json(profile);
  });

  registerUi(app, {
    feed: deps.ui,
    clock: deps.clock,
    adminToken: deps.adminToken,
    isDraining: deps.isStopping,
  });

  app.notFound((c) => {
    throw Errors.notFound(`No route for ${c.req.method} ${c.req.path}.`);
  });
  app.onError((err, c) => {
    const res = toErrorResponse(err);
    const access = c.get("access");
    if (access) access.errorCode = String(res.body.error.code);
    if (deps.isStopping() && c.env?.outgoing) c.env.outgoing.shouldKeepAlive = false;
    if (res.status >= 500 && res.body.error.type === "InternalServerError") {
      deps.logger.error("request failed", { requestId: c.get("requestId"), path: c.req.path, err });
    }
    // In the envelope of the dialect the route speaks (the Anthropic one for /v1/messages…).
    const body = dialectOfPath(c.req.path).errorBody(res);
    return c.json(body, res.status as ContentfulStatusCode, res.headers);
  });
  return app;
}
