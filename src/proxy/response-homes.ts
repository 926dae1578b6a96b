/**
 * Where each OpenAI Responses response maitred relayed is stored: the backend that made it and
 * the program it belongs to. A backend keeps its responses to itself (vLLM's store is in its
 * own memory), so a request naming one (`previous_response_id`, `GET`/`DELETE
 * /v1/responses/{id}`, `/cancel`) must reach that backend: the request continuing a chain
 * belongs to the same program (program-identity.ts) and is pinned to that backend, where the
 * core serves it or nowhere (completion/seat.ts, core/pinned-backend.ts), and the routes that
 * read or end a response go straight to it (responses-passthrough.ts).
 *
 * Bounded: the oldest ids are forgotten past MAX_RESPONSE_HOMES (a response's id is the only
 * key, and a router never learns when a backend drops one).
 *
 * Each home also names the caller that made the response (caller.ts): the OpenAI API scopes a
 * stored response to the project that made it, and a backend cannot, since every tenant
 * reaches it through maitred with maitred's one view of it. `reachable` is that rule.
 */

/**
 * Ids remembered at most; ~200 bytes each (an owner is a reference to its tenant's name, held
 * once by the config), so the bound is a few MB. A chain continues from its latest response,
 * so this is the number of Responses API conversations whose next turn still finds its
 * backend. Its size is `maitred_response_homes`.
 */
export const MAX_RESPONSE_HOMES = 20_000;

export interface ResponseHome {
  backendId: string;
  /** The program's key (scoped by its caller), null for a request of no program. */
  programKey: string | null;
  /** The program's id as its client named it. */
  programId: string | null;
  /** The tenant whose request made the response (caller.ts); null = an anonymous caller. */
  owner: string | null;
}

export interface ResponseHomes {
  record(responseId: string, home: ResponseHome): void;
  get(responseId: string): ResponseHome | undefined;
  forget(responseId: string): void;
  /** Ids remembered now (at most the bound). */
  readonly size: number;
}

export function createResponseHomes(max = MAX_RESPONSE_HOMES): ResponseHomes {
  const homes = new Map<string, ResponseHome>();
  return {
    record(id, home) {
      homes.delete(id);
      homes.set(id, home);
      if (homes.size > max) homes.delete(homes.keys().next().value as string);
    },
    get: (id) => homes.get(id),
    forget: (id) => void homes.delete(id),
    get size() {
      return homes.size;
    },
  };
}

/**
 * Whether `caller` (its tenant, null = anonymous) may reach the response whose home is `home`
 * (undefined = an id maitred does not remember). The cases, in order:
 *   1. An id maitred does not remember is reachable as it always was: it goes to the backends,
 *      whose own 404 answers an id none stores. This is not a tenancy guarantee but the absence
 *      of one: ownership lives exactly as long as the home, so an id maitred never relayed (a
 *      client of the backend's own, or one made before the router restarted) or one forgotten
 *      past MAX_RESPONSE_HOMES reaches any caller that knows it. What stands between a tenant
 *      and such a response is then only the id itself, random and never shown to another
 *      tenant (vLLM's is `resp_` and a random UUID). Refusing unknown ids instead would lock
 *      every tenant out of its own responses after each restart.
 *   2. A response made anonymously is reachable by every caller, as before tenants existed: a
 *      deployment that maps no key (every caller anonymous) behaves exactly as it did.
 *   3. A response made by a tenant is reachable by that tenant alone, whichever of its keys it
 *      calls with; an anonymous caller and every other tenant are answered as for case 1's id
 *      that no backend stores (unknown-response.ts), so they learn nothing of its existence.
 */
export function reachable(home: ResponseHome | undefined, caller: string | null): boolean {
  if (home === undefined) return true; // 1
  if (home.owner === null) return true; // 2
  return home.owner === caller; // 3
}
