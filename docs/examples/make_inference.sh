#!/usr/bin/env bash
# Regenerates docs/examples/inference.md from the tool's own output.
set -euo pipefail
cd "$(dirname "$0")/../.."
{
echo '# Seed questions answered by the tool (inference)'
echo
echo 'Verbatim outputs of the commands shown (regenerate: `bash docs/examples/make_inference.sh`). Model: analytic'
echo 'roofline with measured kernel efficiencies (docs/validation.md reports its error: ~23 % median on TensorRT-LLM H100 throughput).'
echo
echo '## "Serve a 70B model to 10,000 concurrent users with sub-second latency"'
echo
echo 'Step 1 — one node, to see the per-replica numbers:'
echo; echo '```'; echo '$ aiinfra infer examples/infer-llama3.1-70b-h100.yaml'; aiinfra infer examples/infer-llama3.1-70b-h100.yaml; echo '```'
echo
echo 'Step 2 — the fleet: 10,000 concurrent users, 1,024-token prompts, 256-token answers, TTFT ≤ 1 s, TPOT ≤ 50 ms'
echo '(20 tokens/s per user). The search covers H100 and H200, TP 1-8, BF16/FP8/INT4 weights:'
echo; echo '```'; echo '$ aiinfra capacity examples/capacity-llama70b-10k-users.yaml --accelerators nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb'
aiinfra capacity examples/capacity-llama70b-10k-users.yaml --accelerators nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb | cut -c1-175 | head -14; echo '```'
aiinfra capacity examples/capacity-llama70b-10k-users.yaml --accelerators nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb --json | python3 -c "
import json,sys; o=json.load(sys.stdin)['chosen']
print(f\"\nAnswer: **{o['accelerators']} × {o['accelerator']}** ({o['replicas']} replicas of TP{o['tp']}, {o['weight_precision']} weights, \"
      f\"{o['batch_per_replica']} users per replica), TTFT {o['ttft_s']*1e3:.0f} ms and TPOT {o['tpot_s']*1e3:.1f} ms under load; \"
      f\"\${o['usd_per_hour']:,.0f}/h at the cheapest on-demand price in the catalog ({o['price']['source_id']}, read {o['price']['read_on']}) \"
      f\"= **\${o['usd_per_hour']*730:,.0f} per month** (730 h), \${o['usd_per_million_output_tokens']:.2f} per million output tokens.\")"
echo
echo 'Step 3 — check the chosen deployment by simulation (continuous batching with chunked prefill, Poisson'
echo 'arrivals at the rate the users generate by Little'"'"'s law):'
echo; echo '```'; echo '$ aiinfra capacity examples/capacity-llama70b-10k-users.yaml --simulate'
aiinfra capacity examples/capacity-llama70b-10k-users.yaml --simulate | tail -1; echo '```'
cat <<'TXT'

The analytic sizing stretches every running request's TPOT by the share of time prefills take (no
overlap), which is conservative; the simulation interleaves 2,048-token prefill chunks with decodes as
vLLM does and finds about half the accelerators enough. Plan with the analytic figure, and treat the
simulated one as the optimistic bound — the gap is the value of chunked prefill.

Serving framework: the model follows vLLM's allocator and scheduler limits (paged KV blocks of 16 tokens,
90 % memory utilisation, at most 256 sequences per replica — catalog/data/engines.yaml); TensorRT-LLM or
SGLang reach similar batch sizes with FP8 kernels. Techniques that matter, in the order the search picks
them: FP8 weights (halve the bytes each decode step streams), tensor parallelism only as far as needed to
fit the KV cache, continuous batching up to the TPOT limit. Prices are list prices with their dates:
reserved capacity is cheaper (catalog/data/prices/cloud.csv has the rows).
TXT
echo; echo '## What each optimisation buys (Llama-3.1-70B, 8 × H100, 1,024 in / 256 out)'
echo; echo '| configuration | batch | TPOT ms | output tokens/s | per-user tokens/s |'; echo '|---|---|---|---|---|'
row() { aiinfra infer examples/infer-llama3.1-70b-h100.yaml "$@" --json | python3 -c "
import json,sys; o=json.load(sys.stdin); print(f\"| $LABEL | {o['batch_seqs']} | {o['tpot_s']*1e3:.2f} | {o['output_tokens_per_s']:,.0f} | {o['output_tokens_per_s_per_user']:.1f} |\")"; }
LABEL="BF16 weights, BF16 KV, TP8, batch 64" row --set inference.weight_precision=bf16 --set inference.kv_precision=bf16
LABEL="FP8 weights + FP8 KV, TP8, batch 64" row
LABEL="INT4 weights (bf16 compute), TP8, batch 64" row --set inference.weight_precision=int4
LABEL="FP8, TP4 × 2 replicas, batch 64 each" row --set inference.plan.tp=4
LABEL="FP8, TP8, speculative γ=4 α=0.7 (no draft cost), batch 64" row --set 'inference.speculative={num_draft_tokens: 4, acceptance_rate: 0.7}'
LABEL="FP8, TP8, batch 1" row --set inference.batch=1
LABEL="FP8, TP8, speculative γ=4 α=0.7, batch 1" row --set inference.batch=1 --set 'inference.speculative={num_draft_tokens: 4, acceptance_rate: 0.7}'
LABEL="FP8 on H200 instead of H100, batch 64" row --set hardware.accelerator=nvidia-h200-sxm-141gb
LABEL="FP8, TP8, max batch that fits (engine cap 256)" row --set inference.batch=max
} > docs/examples/inference.md
