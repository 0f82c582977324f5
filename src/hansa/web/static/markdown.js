// A tiny, safe Markdown subset for model output.
//
// Safety comes first: every character of the source is HTML-escaped before any markup is
// added, and the only markup added is a fixed set of tags without attributes, except links,
// whose href must be http(s) or a same-site relative path. Model output can never inject HTML.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// On escaped text: "&" in a URL is "&amp;", which is right inside an attribute.
const SAFE_URL = /^(https?:\/\/[^\s<>"']+|\/(?!\/)[^\s<>"']*|#[\w-]*)$/i;

function link(url, label) {
  if (!SAFE_URL.test(url)) return label;
  const external = /^https?:/i.test(url);
  const extra = external ? ' target="_blank" rel="noopener noreferrer nofollow"' : "";
  return `<a href="${url}"${extra}>${label}</a>`;
}

/** Inline markup on one escaped line: `code`, links, **bold**, *italic*, bare URLs. */
function inline(escaped) {
  const codes = [];
  let s = escaped.replace(/`([^`]+)`/g, (_, code) => {
    codes.push(`<code>${code}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  const links = [];
  const keep = (html) => {
    links.push(html);
    return `\u0001${links.length - 1}\u0001`;
  };
  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, url) => keep(link(url, label)));
  // Bare links: absolute http(s) URLs, and the API's own relative paths (/api/...).
  s = s.replace(/(^|[\s(])((?:https?:\/\/|\/api\/)[^\s<>()]*[^\s<>().,;:!?])/g,
    (_, before, url) => before + keep(link(url, url)));
  s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  s = s.replace(/(^|[^\w*])\*([^*\s][^*]*?)\*(?![\w*])/g, "$1<em>$2</em>");
  s = s.replace(/(^|[^\w])_([^_\s][^_]*?)_(?!\w)/g, "$1<em>$2</em>");
  s = s.replace(/\u0001(\d+)\u0001/g, (_, i) => links[Number(i)]);
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
}

const BULLET = /^\s*[-*•]\s+(.*)$/;
const NUMBERED = /^\s*(\d+)[.)]\s+(.*)$/;
const HEADING = /^(#{1,4})\s+(.*)$/;

/** Render Markdown source to an HTML string that is safe to assign to innerHTML. */
export function renderMarkdown(source) {
  const lines = escapeHtml(source ?? "").split(/\r?\n/);
  const out = [];
  let para = [];
  let list = null; // {tag, items}
  let fence = null;

  const flushPara = () => {
    if (para.length) out.push(`<p>${para.map(inline).join("<br>")}</p>`);
    para = [];
  };
  const flushList = () => {
    if (list) {
      const start = list.tag === "ol" && list.start !== 1 ? ` start="${list.start}"` : "";
      const items = list.items.map((i) => `<li>${inline(i)}</li>`).join("");
      out.push(`<${list.tag}${start}>${items}</${list.tag}>`);
    }
    list = null;
  };

  for (const line of lines) {
    if (fence) {
      if (/^\s*```/.test(line)) {
        out.push(`<pre><code>${fence.join("\n")}</code></pre>`);
        fence = null;
      } else fence.push(line);
      continue;
    }
    if (/^\s*```/.test(line)) {
      flushPara();
      flushList();
      fence = [];
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    const heading = HEADING.exec(line);
    if (bullet || numbered) {
      flushPara();
      const tag = bullet ? "ul" : "ol";
      if (!list || list.tag !== tag) {
        flushList();
        list = { tag, items: [], start: numbered ? Number(numbered[1]) : 1 };
      }
      list.items.push(bullet ? bullet[1] : numbered[2]);
    } else if (heading) {
      flushPara();
      flushList();
      out.push(`<h4>${inline(heading[2])}</h4>`);
    } else if (line.trim() === "") {
      flushPara();
      flushList();
    } else if (list && /^\s{2,}\S/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`;
    } else {
      flushList();
      para.push(line);
    }
  }
  if (fence) out.push(`<pre><code>${fence.join("\n")}</code></pre>`);
  flushPara();
  flushList();
  return out.join("");
}

/** The first sentence or line of a text, for a collapsed summary (plain text). */
export function firstSentence(source, max = 160) {
  const line = String(source ?? "").trim().split(/\n/)[0] || "";
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] || line;
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}
