"use strict";
// Renders /api/openapi.json as a list of endpoints (the page must work offline: no CDN documentation viewer).
(async () => {
  const main = document.getElementById("api-docs");
  const spec = await (await fetch("/api/openapi.json")).json();
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  let html = `<h1>${esc(spec.info.title)} ${esc(spec.info.version)}</h1><p>${esc(spec.info.description)}</p>`;
  // the example runs as printed: this server's own address, a scenario every key of which the API knows
  const example = { model: "meta-llama-3.1-8b", hardware: { accelerator: "nvidia-h100-sxm5-80gb" },
    inference: { input_tokens: 1024, output_tokens: 256, request_rate_per_s: 4 } };
  html += `<p>Example (the inference estimate of a scenario; any question takes the same body):</p><pre id="example-curl">curl -s -X POST '${esc(location.origin)}/api/v1/infer' -H 'content-type: application/json' -d '${esc(JSON.stringify(example))}'</pre>` +
    `<pre hidden id="example-body">${esc(JSON.stringify(example))}</pre>`;
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters || []).map((p) => `<li><code>${esc(p.name)}</code> (${esc(p.in)}${p.required ? ", required" : ""})${p.description ? ": " + esc(p.description) : ""}</li>`).join("");
      html += `<section class="endpoint" data-path="${esc(path)}"><h3><span class="method">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>` +
        `<p>${esc(op.description || op.summary || "")}</p>${params ? `<ul>${params}</ul>` : ""}</section>`;
    }
  }
  main.innerHTML = html;
})();
