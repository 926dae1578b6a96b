// The live page: reads one frame a second from /ui/events (the token, if the page was opened
// with ?token=, goes along) and redraws the tables and the two uPlot charts.

const $ = (sel) => document.querySelector(sel);
const PALETTE = ["#2f5fb3", "#c0392b", "#1a7f37", "#8e44ad", "#d35400", "#16a085", "#7f8c8d"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child ?? "");
  return node;
}

const fmtInt = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en"));
const fmtPct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)} %`);
const fmtSecs = (ms) => {
  if (ms === null || ms === undefined) return "";
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
};
const shortUrl = (u) => u.replace(/^https?:\/\//, "");

// A held request's place in the queue (1 = next), its wait, and when room is made for it
// (ageing, or its class's threshold) and when it is seated at the latest (the max pause).
function fmtHold(h) {
  if (!h) return "";
  const room = h.roomInMs === null ? "" : ` · room in ${fmtSecs(h.roomInMs)}`;
  return `#${h.position} · waited ${fmtSecs(h.waitedMs)}${room} · seated within ${fmtSecs(h.seatInMs)}`;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function renderTotals(f) {
  const items = [
    ["steps/min", fmtInt(f.stepsPerMin)],
    ["programs", fmtInt(f.counts.programs)],
    ["reasoning", fmtInt(f.counts.reasoning)],
    ["acting", fmtInt(f.counts.acting)],
    ["paused", fmtInt(f.counts.paused)],
    ["queued requests", fmtInt(f.queueLength)],
    ["held programs", fmtInt(f.heldPrograms)],
  ];
  $("#totals").replaceChildren(
    ...items.map(([k, v]) => el("div", null, el("dt", null, k), el("dd", null, v))),
  );
}

function renderBackends(f) {
  fill(
    $("#backends tbody"),
    f.backends.map((b) => {
      const belief = b.capacityTokens ? b.usedTokens / b.capacityTokens : null;
      const bar = el(
        "div",
        { class: "bar", title: `booked ${fmtPct(belief)}, engine ${fmtPct(b.kvUsage)}` },
        el("span", { class: "belief", style: `width:${Math.min(100, 100 * (belief ?? 0))}%` }),
        el("span", { class: "truth", style: `width:${Math.min(100, 100 * (b.kvUsage ?? 0))}%` }),
      );
      return el(
        "tr",
        { "data-backend": b.id },
        el("td", null, shortUrl(b.id)),
        el(
          "td",
          { class: b.healthy ? "healthy" : "unhealthy" },
          b.healthy ? "healthy" : "unhealthy",
        ),
        el("td", { class: "num" }, fmtInt(b.capacityTokens)),
        el("td", { class: "num" }, `${fmtInt(b.usedTokens)} (${fmtPct(belief)})`),
        el("td", { class: "num" }, fmtPct(b.kvUsage)),
        el("td", null, bar),
        el("td", { class: "num" }, fmtInt(b.running)),
        el("td", { class: "num" }, fmtInt(b.waiting)),
        el("td", null, b.preempting === null ? "–" : b.preempting ? "yes" : "no"),
        el("td", null, hostKv(b)),
        el("td", { class: "num" }, fmtInt(b.activePrograms)),
        el("td", { class: "num" }, fmtInt(b.lentPrograms)),
      );
    }),
  );
}

/** "yes" with the tier's size in tokens when known, "no", or "–" when the engine does not say. */
function hostKv(b) {
  if (b.hostKvTier === null) return "–";
  if (!b.hostKvTier) return "no";
  return b.hostKvTokens === null ? "yes" : `yes, ${fmtInt(b.hostKvTokens)} tokens`;
}

function renderClasses(f) {
  $("#classes-section").hidden = f.classes === null;
  if (f.classes === null) return;
  fill(
    $("#classes tbody"),
    f.classes.map((c) =>
      el(
        "tr",
        null,
        el("td", null, c.name),
        el("td", { class: "num" }, fmtInt(c.queued)),
        el("td", { class: "num" }, fmtInt(c.promotions)),
        el("td", { class: "num" }, fmtInt(c.preemptions)),
      ),
    ),
  );
}

/** What is left of a program's budgets (as /programs shows them): "12 steps · 1,200,000 tok · 25m 0s". */
function fmtBudget(budget) {
  if (budget === null) return "";
  const parts = [];
  if (budget.steps) parts.push(`${fmtInt(budget.steps.left)} steps`);
  if (budget.tokens) parts.push(`${fmtInt(budget.tokens.left)} tok`);
  if (budget.wall_ms) parts.push(fmtSecs(budget.wall_ms.left));
  return parts.join(" · ");
}

function renderPrograms(f) {
  $("#programs-note").textContent =
    f.programs.length < f.counts.programs
      ? `(${f.programs.length} of ${f.counts.programs}, paused first, sub-agents under their parent)`
      : "";
  fill(
    $("#programs tbody"),
    f.programs.map((p) =>
      el(
        "tr",
        { class: p.state === "PAUSED" ? "paused" : null, "data-program": p.id },
        el(
          "td",
          {
            class: p.depth > 0 ? "subagent" : null,
            style: p.depth > 0 ? `padding-left: ${p.depth * 1.2}em` : null,
            title: p.subagents > 0 ? `${p.subagents} sub-agent(s) below` : null,
          },
          p.depth > 0 ? `↳ ${p.id}` : p.id,
        ),
        el("td", null, p.tenant ?? ""),
        el("td", null, p.state.toLowerCase()),
        el("td", null, p.status.toLowerCase()),
        el("td", { class: "num" }, fmtInt(p.tokens)),
        el("td", null, p.backend ? shortUrl(p.backend) : ""),
        el("td", { class: "num" }, fmtInt(p.steps)),
        el("td", { class: "num" }, fmtSecs(p.pausedForMs)),
        el("td", { class: "hold" }, fmtHold(p.hold)),
        el("td", null, p.class ?? ""),
        el("td", { class: "num" }, fmtBudget(p.budget)),
      ),
    ),
  );
}

function renderDecisions(f) {
  $("#decisions").replaceChildren(
    ...f.decisions.map((d) => {
      const when = new Date(d.at).toLocaleTimeString("en-GB");
      const who = [
        d.programId,
        d.tenant ? `(${d.tenant})` : null,
        d.backend ? `on ${shortUrl(d.backend)}` : null,
      ]
        .filter(Boolean)
        .join(" ");
      return el(
        "li",
        null,
        el("time", null, when),
        `${d.msg}${who ? `: ${who}` : ""}`,
        d.why ? el("span", { class: "why" }, ` — ${d.why}`) : null,
      );
    }),
  );
}

// The tr shadow's panel (maitred serve --shadow): its counts, and its latest decisions with
// the backend the router actually chose where the two differ.
function renderShadow(f) {
  const s = f.shadow;
  $("#shadow-section").hidden = s === null || s === undefined;
  if (!s) return;
  const d = s.decisions;
  const resumes = d.resume + d.overdue_resume + d.forced_resume + d.idle_resume;
  const items = [
    ["would pause", fmtInt(d.pause)],
    ["paused now", fmtInt(s.pausedNow)],
    ["pause p50 / max", `${fmtSecs(s.pausedP50Ms) || "–"} / ${fmtSecs(s.pausedMaxMs) || "–"}`],
    ["would hold", fmtInt(s.held)],
    ["held now", fmtInt(s.heldNow)],
    ["hold p50 / max", `${fmtSecs(s.heldP50Ms) || "–"} / ${fmtSecs(s.heldMaxMs) || "–"}`],
    ["marks", fmtInt(d.mark)],
    ["resumes", fmtInt(resumes)],
    ["lends", fmtInt(d.lend)],
    ["seats elsewhere", `${fmtInt(s.seats.elsewhere)} of ${fmtInt(s.seats.total)}`],
    ["engine overflow ticks", `${fmtInt(s.overflowTicks)} of ${fmtInt(s.engineTicks)}`],
    ["engine preemptions", fmtInt(s.preemptions)],
    ["errors", fmtInt(s.errors)],
  ];
  $("#shadow-totals").replaceChildren(
    ...items.map(([k, v]) => el("div", null, el("dt", null, k), el("dd", null, v))),
  );
  $("#shadow-note").textContent =
    s.firstChangeAt === null
      ? "No decision so far would have changed the traffic: these are exactly tr's decisions."
      : `Since ${new Date(s.firstChangeAt).toLocaleTimeString("en-GB")} tr would have sent different traffic; the figures since are an estimate.`;
  $("#shadow-decisions").replaceChildren(
    ...s.recent.map((x) => {
      const when = new Date(x.at).toLocaleTimeString("en-GB");
      const who = [
        x.program_id,
        x.tenant ? `(${x.tenant})` : null,
        x.backend ? `on ${shortUrl(x.backend)}` : null,
        x.kind === "seat" && x.changes_traffic && x.actual_backend
          ? `(router: ${shortUrl(x.actual_backend)})`
          : null,
      ]
        .filter(Boolean)
        .join(" ");
      return el(
        "li",
        { class: x.changes_traffic ? "changes" : null },
        el("time", null, when),
        `${x.kind.replace("_", " ")}${who ? `: ${who}` : ""}`,
        x.reason ? el("span", { class: "why" }, ` — ${x.reason}`) : null,
      );
    }),
  );
}

const charts = { steps: null, kv: null, kvKey: "" };

function chartWidth(id) {
  return Math.max(300, $(id).parentElement.clientWidth - 16);
}

function renderCharts(f) {
  const h = f.history;
  if (h.t.length === 0) return;
  if (charts.steps === null) {
    charts.steps = new uPlot(
      {
        width: chartWidth("#chart-steps"),
        height: 220,
        series: [{}, { label: "steps/min", stroke: PALETTE[0], width: 2 }],
        axes: [{}, { size: 60 }],
      },
      [h.t, h.stepsPerMin],
      $("#chart-steps"),
    );
  } else charts.steps.setData([h.t, h.stepsPerMin]);

  const ids = Object.keys(h.truth);
  const key = ids.join(",");
  const data = [h.t];
  const series = [{}];
  ids.forEach((id, i) => {
    const color = PALETTE[i % PALETTE.length];
    series.push({ label: `${shortUrl(id)} booked`, stroke: color, dash: [6, 4], width: 1.5 });
    series.push({ label: `${shortUrl(id)} engine`, stroke: color, width: 2 });
    data.push(h.belief[id], h.truth[id]);
  });
  if (charts.kv === null || charts.kvKey !== key) {
    charts.kv?.destroy();
    charts.kvKey = key;
    charts.kv = new uPlot(
      {
        width: chartWidth("#chart-kv"),
        height: 220,
        series,
        // Booked room may pass 100 % (one program over, by design); the engine's never does.
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          {},
          { size: 60, values: (_u, ticks) => ticks.map((v) => `${Math.round(v * 100)} %`) },
        ],
      },
      data,
      $("#chart-kv"),
    );
  } else charts.kv.setData(data);
}

function render(f) {
  $("#mode").textContent = `router: ${f.mode}`;
  renderTotals(f);
  renderCharts(f);
  renderBackends(f);
  renderClasses(f);
  renderShadow(f);
  renderPrograms(f);
  renderDecisions(f);
}

function connect() {
  const status = $("#status");
  const source = new EventSource(`/ui/events${location.search}`);
  source.onmessage = (e) => {
    const frame = JSON.parse(e.data);
    status.textContent = frame.draining ? "shutting down" : "live";
    status.className = frame.draining ? "pill down" : "pill live";
    render(frame);
  };
  source.onerror = () => {
    status.textContent = "reconnecting…";
    status.className = "pill down";
  };
}

connect();
