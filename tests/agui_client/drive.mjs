// Drives dynavec_langgraph.agui with @ag-ui/client's HttpAgent, as an AG-UI app does.
// Usage: node drive.mjs BASE_URL SCENARIO; prints one JSON report on stdout
// (tests/test_agui_clients.py reads it and checks the server's ledger).
import { HttpAgent, buildResumeArray, isInterruptExpired } from "@ag-ui/client";
import { randomUUID } from "node:crypto";

const [base, scenario] = process.argv.slice(2);
const report = {};

function agent(name, threadId) {
  return new HttpAgent({ url: `${base}/agents/${name}/`, threadId });
}

// One run: the events seen, the outcome, the error (RUN_ERROR) if any.
async function run(a, params = {}) {
  const events = [];
  let error = null;
  try {
    await a.runAgent(params, {
      onEvent: ({ event }) => {
        events.push(event.type);
      },
      onRunErrorEvent: ({ event }) => {
        error = { message: event.message, code: event.code };
      },
    });
  } catch (e) {
    error = error ?? { message: String(e && e.message ? e.message : e), code: "CLIENT" };
  }
  const interrupts = a.pendingInterrupts.map((i) => ({ ...i }));
  const last = a.messages[a.messages.length - 1];
  return { events, error, interrupts, lastText: last && last.role === "assistant" ? last.content : null };
}

async function start(name) {
  const a = agent(name, randomUUID());
  report.thread = a.threadId;
  a.addMessage({ id: randomUUID(), role: "user", content: "go" });
  return [a, await run(a)];
}

const approve = { type: "approve" };

if (scenario === "pause_resume_one") {
  const [a, paused] = await start("approval");
  report.paused = paused;
  const [i] = paused.interrupts;
  report.resumed = await run(a, { resume: buildResumeArray(paused.interrupts, { [i.id]: { status: "resolved", payload: approve } }) });
  report.stale = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: approve }] });
  report.unknown = await run(agent("approval", a.threadId), { resume: [{ interruptId: "no-such-interrupt", status: "resolved", payload: approve }] });
} else if (scenario === "resume_several") {
  const [a, paused] = await start("parallel");
  report.paused = paused;
  const [ann, bob] = paused.interrupts;
  const edit = { type: "edit", args: { amount: 3, to: "Bob" } };
  report.resumed = await run(a, {
    resume: buildResumeArray(paused.interrupts, {
      [ann.id]: { status: "resolved", payload: approve },
      [bob.id]: { status: "resolved", payload: edit },
    }),
  });
} else if (scenario === "invalid_then_cancel") {
  const [a, paused] = await start("approval");
  const [i] = paused.interrupts;
  report.invalid = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: { type: "edit", args: { amount: "lots", to: "Bob" } } }] });
  report.cancelled = await run(a, { resume: [{ interruptId: i.id, status: "cancelled", payload: { message: "not today" } }] });
} else if (scenario === "expiry") {
  const [a, paused] = await start("expiring");
  report.paused = paused;
  const [i] = paused.interrupts;
  const deadline = Date.parse(i.expiresAt);
  await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 300));
  report.expiredOnClient = isInterruptExpired(i, new Date());
  // the client refuses to send it; another client (a fresh agent on the thread) sends it
  report.clientRefuses = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: approve }] });
  report.late = await run(agent("expiring", a.threadId), { resume: [{ interruptId: i.id, status: "resolved", payload: approve }] });
  report.closed = await run(a, { resume: [{ interruptId: i.id, status: "cancelled" }] });
} else if (scenario === "concurrent") {
  const [a, paused] = await start("approval");
  const [i] = paused.interrupts;
  const answers = [0, 1, 2, 3].map(() => agent("approval", a.threadId));
  report.answers = await Promise.all(
    answers.map((b) => run(b, { resume: [{ interruptId: i.id, status: "resolved", payload: approve }] })),
  );
} else if (scenario === "two_approvers") {
  const [a, paused] = await start("two_approvers");
  report.paused = paused;
  const first = paused.interrupts[0];
  const as = (who, id) => [{ interruptId: id, status: "resolved", payload: approve, metadata: { approver: who } }];
  report.nobody = await run(a, { resume: [{ interruptId: first.id, status: "resolved", payload: approve }] });
  report.ann = await run(a, { resume: as("ann", first.id) });
  const second = report.ann.interrupts[0];
  report.annAgain = await run(a, { resume: as("ann", second.id) });
  report.bob = await run(a, { resume: as("bob", second.id) });
} else {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
console.log(JSON.stringify(report));
