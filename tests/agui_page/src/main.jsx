// A CopilotKit page approving dynavec_langgraph.agui pauses (tests/test_agui_clients.py).
// Query: ?agent=NAME&thread=ID&as=APPROVER. CopilotKit talks to the AG-UI endpoint
// /agents/NAME/ directly (an HttpAgent, no CopilotKit runtime); every pause is drawn in the chat
// by useInterrupt, one card per pending interrupt, answered with resolve / cancel.
import React, { useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { CopilotKit, CopilotChat, HttpAgent, useInterrupt } from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { HttpAgent as AguiHttpAgent } from "@ag-ui/client";

const query = new URLSearchParams(window.location.search);
let pageAgent = null; // the HttpAgent CopilotKit runs (App sets it)
const agentName = query.get("agent") || "approval";
const threadId = query.get("thread") || crypto.randomUUID();

// The time now, ticking: a card redraws when its approval expires.
function useNow() {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  return now;
}

function Expiry({ at, expired }) {
  if (!at) return null;
  return (
    <p data-testid="expiry" data-expired={expired ? "yes" : "no"}>
      {expired ? `Expired at ${at}: only Cancel closes it` : `Expires at ${at}`}
    </p>
  );
}

const card = { border: "1px solid #888", borderRadius: 6, padding: 8, margin: 8 };
const control = { border: "1px solid #aaa", borderRadius: 4, padding: "2px 6px", margin: 4 };

function Card({ interrupt, resolve, cancel }) {
  const meta = interrupt.metadata || {};
  const allowed = meta.allowedDecisions || [];
  const args = meta.args || {};
  const [edited, setEdited] = useState(args);
  const [reason, setReason] = useState("");
  const [closed, setClosed] = useState(null);
  const now = useNow();
  const expired = Boolean(interrupt.expiresAt) && now >= Date.parse(interrupt.expiresAt);
  const approval = meta.approval;
  const id = interrupt.id;
  const field = (key) => (
    <label key={key}>
      {key}{" "}
      <input
        style={control}
        data-testid={`edit-${key}`}
        value={String(edited[key] ?? "")}
        onChange={(e) => setEdited({ ...edited, [key]: typeof args[key] === "number" ? Number(e.target.value) : e.target.value })}
      />
    </label>
  );
  return (
    <div data-testid="interrupt" data-tool-call={interrupt.toolCallId} style={card}>
      <p data-testid="message">{interrupt.message}</p>
      <p>reason: {interrupt.reason}; path: {(meta.path || []).join(" / ")}</p>
      {approval ? (
        <p data-testid="approvals">
          approvals {approval.approved_by.length} of {approval.approvals_required}
          {approval.approvers ? `; may approve: ${approval.approvers.join(", ")}` : ""}
        </p>
      ) : null}
      <Expiry at={interrupt.expiresAt} expired={expired} />
      {allowed.includes("edit") && !expired ? <div>{Object.keys(args).map(field)}</div> : null}
      {allowed.includes("reject") ? (
        <input style={control} data-testid="reason" placeholder="reason" value={reason} onChange={(e) => setReason(e.target.value)} />
      ) : null}
      {allowed.includes("approve") && !expired ? (
        <button style={control} data-testid="approve" onClick={() => resolve({ type: "approve" }, id)}>Approve</button>
      ) : null}
      {allowed.includes("edit") && !expired ? (
        <button style={control} data-testid="edit" onClick={() => resolve({ type: "edit", args: edited }, id)}>Approve edited</button>
      ) : null}
      {allowed.includes("reject") && !expired ? (
        <button style={control} data-testid="reject" onClick={() => cancel(id)}>Cancel</button>
      ) : null}
      {expired ? (
        // CopilotKit 1.74.0 does not resume an expired interrupt, not even to cancel it
        // (useInterrupt: "expired ...; not resuming"; its @ag-ui/client 0.0.59 refuses any run
        // while one is pending): @ag-ui/client 1.0.0 sends the cancel, CopilotKit shows the result.
        <button
          style={control}
          data-testid="close-expired"
          onClick={async () => {
            const closer = new AguiHttpAgent({ url: pageAgent.url, threadId: pageAgent.threadId });
            await closer.runAgent({ resume: [{ interruptId: id, status: "cancelled" }] });
            const last = closer.messages[closer.messages.length - 1];
            setClosed(last && last.role === "assistant" ? last.content : "closed");
            pageAgent.pendingInterrupts = [];
            pageAgent.setMessages(closer.messages);
          }}
        >
          Close (expired)
        </button>
      ) : null}
      {allowed.includes("reject") && !expired ? (
        <button style={control} data-testid="reject-reason" onClick={() => resolve({ type: "reject", message: reason }, id)}>Reject with reason</button>
      ) : null}
      {closed ? <p data-testid="closed">{closed}</p> : null}
    </div>
  );
}

function Approvals() {
  useInterrupt({
    agentId: agentName,
    render: ({ interrupts, resolve, cancel }) => (
      <div data-testid="interrupts">
        {interrupts.map((i) => (
          <Card key={i.id} interrupt={i} resolve={resolve} cancel={cancel} />
        ))}
      </div>
    ),
  });
  return null;
}

function App() {
  const [who, setWho] = useState(query.get("as") || "");
  const agent = useMemo(
    () => new HttpAgent({ url: `${window.location.origin}/agents/${agentName}/`, threadId }),
    [],
  );
  agent.headers = who ? { "x-approver": who } : {};
  pageAgent = agent;
  return (
    <CopilotKit agents__unsafe_dev_only={{ [agentName]: agent }}>
      <p>
        agent <b data-testid="agent">{agentName}</b>, thread <span data-testid="thread">{threadId}</span>, approving as{" "}
        <b data-testid="who">{who || "nobody"}</b>{" "}
        {["ann", "bob"].map((name) => (
          <button key={name} data-testid={`as-${name}`} onClick={() => setWho(name)}>
            as {name}
          </button>
        ))}
      </p>
      <Approvals />
      <div style={{ height: 700 }}>
        <CopilotChat agentId={agentName} threadId={threadId} />
      </div>
    </CopilotKit>
  );
}

createRoot(document.getElementById("root")).render(<App />);
