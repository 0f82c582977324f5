// Turn-taking and rules told in words (seed 001: "Control Center shows claim/defer
// reasoning"): who claimed a message and why, who deferred to whom, who watched, who
// answers, and which rule fired with each condition's actual value. The same words as the
// timeline's (engine/triggers/explain.py), from the same events; the feed shows them as
// entries of the turn's thinking list.

export const TURN_TAKING = new Set([
  "rule_evaluated",
  "assistant.intent.claim",
  "assistant.intent.defer",
  "assistant.action.observe",
  "assistant.action.respond",
]);

const ACTUAL_CHARS = 60;

function shown(value) {
  const text = JSON.stringify(value ?? null);
  return text.length <= ACTUAL_CHARS ? text : `${text.slice(0, ACTUAL_CHARS - 1)}…`;
}

/** ``user.tier eq "vip" (it was "vip")``. */
export function condition(c) {
  let asked = `${c.field} ${c.operator}`;
  if (c.value !== null && c.value !== undefined) asked += ` ${shown(c.value)}`;
  if (c.timedOut) return `${asked} (timed out)`;
  return `${asked} (${c.found ? `found ${shown(c.found)}` : `it was ${shown(c.actual)}`})`;
}

function why(j) {
  const conditions = j.conditions || [];
  if (!conditions.length) return j.reason;
  const rule = j.triggerRule ? `rule ${j.triggerRule}: ` : "";
  return `${j.reason} (${rule}${conditions.map(condition).join(" and ")})`;
}

/** The words for one turn-taking or rule event; ``name(id)`` gives an agent's name. */
export function explain(ev, name) {
  const d = ev.data || {};
  switch (ev.type) {
    case "rule_evaluated": {
      const fired = (d.firings || []).filter((f) => f.matched);
      if (!fired.length) return `No rule matched ${d.trigger} (${(d.skipped || 0) + (d.firings || []).length} evaluated)`;
      return fired.map((f) => {
        const said = (f.conditions || []).map(condition).join(" and ") || "no conditions";
        return `Rule ${f.ruleId} fired on ${d.trigger}: ${said}`;
      }).join("; ");
    }
    case "assistant.intent.claim": {
      const terms = `priority ${d.claim.priority}, confidence ${d.justification.confidence}`;
      return `${name(d.assistantKey)} claimed the message (${terms}): ${why(d.justification)}`;
    }
    case "assistant.intent.defer":
      return `${name(d.assistantKey)} deferred to ${name(d.deferredTo)}, a stronger claim; `
        + `it had claimed: ${d.justification.reason}`;
    case "assistant.action.observe":
      return `${d.assistantKeys.map(name).join(", ")} watched without answering: ${d.justification.reason}`;
    case "assistant.action.respond":
      return `${name(d.assistantKey)} answers${d.external ? " (from outside, on its own)" : ""}: `
        + why(d.justification);
    default:
      return null;
  }
}
