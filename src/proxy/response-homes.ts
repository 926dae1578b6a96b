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
 */

/**
 * Ids remembered at most; ~200 bytes each, so the bound is a few MB. A chain continues from its
 * latest response, so this is the number of Responses API conversations whose next turn still
 * finds its backend. Its size is `maitred_response_homes`.
 */
export const MAX_RESPONSE_HOMES = 20_000;

export interface ResponseHome {
  backendId: string;
  /** The program's key (scoped by its caller), null for a request of no program. */
  programKey: string | null;
  /** The program's id as its client named it. */
  programId: string | null;
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
