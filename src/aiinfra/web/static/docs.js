"use strict";
// Renders /api/openapi.json as a list of endpoints (the page must work offline: no CDN documentation viewer).
(async () => {
  const main = document.getElementById("api-docs");
  const spec = await (await fetch("/api/openapi.json")).json();
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  let html = `<h1>${esc(spec.info.title)} ${esc(spec.info.version)}</h1><p>${esc(spec.info.description)}</p>`;
  html += "<p>Example: <code>curl -s -X POST http://127.0.0.1:8000/api/v1/train -H 'content-type: application/json' -d '{\"model\": \"meta-llama-3.1-8b\", \"hardware\": {\"accelerator\": \"nvidia-h100-sxm5-80gb\", \"count\": 8}, \"training\": {\"tokens\": 1e12, \"global_batch_tokens\": 4194304, \"seq_len\": 8192}}'</code></p>";
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters || []).map((p) => `<li><code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ", required" : ""})${p.description ? ": " + esc(p.description) : ""}</li>`).join("");
      html += `<section class="endpoint" data-path="${esc(path)}"><h3><span class="method">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>` +
        `<p>${esc(op.description || op.summary || "")}</p>${params ? `<ul>${params}</ul>` : ""}</section>`;
    }
  }
  main.innerHTML = html;
})();
