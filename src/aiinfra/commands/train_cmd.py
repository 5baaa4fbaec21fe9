"""`aiinfra train` and `aiinfra memory`."""

from __future__ import annotations

import argparse
from typing import Any

from aiinfra import app
from aiinfra.commands import COMMAND_HELP, add_scenario_args
from aiinfra.report.bands import accuracy_line, band, seconds_band
from aiinfra.report.render import fmt_num, key_values, table
from aiinfra.report.text import GB, J_PER_KWH, human_energy, human_seconds, plural

_plan_text = app.plan_label


def _train(args: argparse.Namespace) -> tuple[Any, str]:
    """Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    r = app.train(app.load_scenario(args.scenario, args.set))
    sc, rep, best = r.scenario, r.report, r.best
    obj = r.to_dict()
    acc = obj["accuracy"]
    mb = best.memory_breakdown
    energy = "unknown" if best.energy_j is None else human_energy(best.energy_j)
    if best.energy_j is not None:
        div = J_PER_KWH if best.energy_j < 1000.0 * J_PER_KWH else 1000.0 * J_PER_KWH  # human_energy's unit
        energy += band(acc, "energy_j", lambda v: f"{v / div:,.1f}")
    lines = [
        f"{sc.model.id} on {sc.cluster.count} × {sc.cluster.accelerator.id} ({plural(sc.cluster.nodes, 'node')})",
        "",
        key_values(
            [
                ("plan", _plan_text(best.plan)),
                ("why this layout", r.why),
                ("fits", best.fits),
                (
                    "memory per accelerator",
                    f"{best.memory_per_accelerator_bytes / GB:.1f} GB of "
                    f"{best.memory_capacity_bytes / GB:.1f} GB (weights {mb['weights_bytes'] / GB:.1f}, grads "
                    f"{mb['gradients_bytes'] / GB:.1f}, optimizer {mb['optimizer_states_bytes'] / GB:.1f}, activations "
                    f"{mb['activations_bytes'] / GB:.1f}, other {mb['other_bytes'] / GB:.1f})",
                ),
                (
                    "step time",
                    f"{best.step_time_s:.3f} s{band(acc, 'step_time_s', lambda v: f'{v:.3f}')} "
                    f"(compute {best.step_breakdown['compute_s']:.3f}, exposed comm "
                    f"{best.step_breakdown['exposed_communication_s']:.3f}, bubble "
                    f"{best.step_breakdown['pipeline_bubble_s']:.3f}, slowest-rank wait "
                    f"{best.step_breakdown['straggler_wait_s']:.3f})",
                ),
                ("tokens/s", f"{fmt_num(best.tokens_per_s)}{band(acc, 'tokens_per_s')}"),
                (
                    "tokens/s per accelerator",
                    f"{fmt_num(best.tokens_per_s_per_accelerator)}{band(acc, 'tokens_per_s_per_accelerator')}",
                ),
                (
                    "MFU",
                    f"{best.mfu_frac:.1%}{band(acc, 'mfu_frac', lambda v: f'{v:.1%}')}"
                    if best.fits
                    else "— (does not fit)",
                ),
                (
                    "time to train",
                    human_seconds(best.time_to_train_s) + seconds_band(acc, "time_to_train_s", best.time_to_train_s),
                ),
                ("accelerator-hours", f"{fmt_num(best.accelerator_hours)}{band(acc, 'accelerator_hours')}"),
                (
                    "accelerators idle",
                    f"{r.idle} of {sc.cluster.count} (paid for {obj['idle_accelerator_hours']:,.0f} "
                    "accelerator-hours unused)"
                    if r.idle
                    else "none",
                ),
                ("energy (accelerators at TDP)", energy),
            ]
        ),
    ]
    if rep.searched:
        lines += [
            "",
            f"searched {rep.candidates:,} candidates in {rep.search_wall_s:.2f} s: "
            f"{rep.valid_plans:,} valid, "
            f"{rep.fitting_plans:,} fit in memory",
            "",
            "best plans:",
            table(
                ["plan", "step s", "MFU", "memory GB", "days"],
                [
                    [
                        _plan_text(e.plan),
                        f"{e.step_time_s:.3f}",
                        f"{e.mfu_frac:.1%}" if e.fits else "—",
                        f"{e.memory_per_accelerator_bytes / GB:.1f}",
                        f"{e.time_to_train_s / 86400:.1f}",
                    ]
                    for e in rep.estimates
                ],
            ),
            "",
            "rejected:",
        ]
        lines += [f"  {v:>12,}  {k}" for k, v in sorted(rep.rejected.items(), key=lambda kv: -kv[1])]
    if obj.get("reliability"):
        lines += ["", *_reliability_lines(obj["reliability"])]
    lines += [f"note: {n}" for n in rep.notes]
    lines += ["", accuracy_line(acc)]
    lines += ["", f"FLOP convention: {rep.flop_convention}", "efficiency sources: " + "; ".join(rep.efficiency_sources)]
    return obj, "\n".join(lines)


def _reliability_lines(r: dict[str, Any]) -> list[str]:
    """The reliability block (failures, checkpoints, restarts) of `train`'s text output.

    Long because it lays out the command's text report line by line (formatting only: the answer and its numbers
    come from the application layer, whose result's to_dict() is the --json output)."""
    ck = r["checkpoint"]
    mc = r["monte_carlo"]
    spread = (
        f"p50 {human_seconds(r['time_to_train_p50_s'])}, p90 {human_seconds(r['time_to_train_p90_s'])} "
        f"({mc['trials']:,} Monte-Carlo trials, seed {mc['seed']})"
        if mc
        else "no Monte-Carlo (trials 0)"
    )
    causes = ", ".join(f"{k} {v:.3g}/h" for k, v in r["top_causes_per_hour"].items())
    rb = r["rate_basis"]
    lo, hi = r["time_to_train_band_s"]
    racc = r.get("accuracy")
    badput = ", ".join(
        f"{k.removesuffix('_s').replace('_', ' ')} {v / r['time_to_train_mean_s']:.1%}"
        for k, v in r["badput_s"].items()
        if v > 0
    )
    return [
        "reliability (failures, checkpoints, restarts; see docs/reliability.md):",
        key_values(
            [
                (
                    "time to train with failures",
                    f"{human_seconds(r['time_to_train_mean_s'])} expected"
                    f"{seconds_band(racc, 'time_to_train_mean_s', r['time_to_train_mean_s'])}; "
                    f"{spread}",
                ),
                (
                    "rate uncertainty band",
                    f"{human_seconds(lo) if lo else '-'} to "
                    f"{human_seconds(hi) if hi else 'no end (failures outpace the checkpoints)'} "
                    f"(rates / and × {rb['uncertainty_ratio']:.2f})",
                ),
                ("time to train without failures", human_seconds(r["time_to_train_no_failures_s"])),
                (
                    "effective training time (ETTR)",
                    f"{r['ettr_frac']:.1%}{band(racc, 'ettr_frac', lambda v: f'{v:.1%}')}",
                ),
                ("badput (share of the time)", badput or "none"),
                (
                    "failure rates",
                    f"{rb['family_id']} ({rb['family_basis']}, × {rb['family_ratio']:g}), {rb['memory_id']} "
                    f"({rb['memory_basis']}), age × {rb['age_ratio']:.3g}, repeat offenders × "
                    f"{rb['lemon_ratio']:.3g}",
                ),
                (
                    "cluster-wide failures",
                    f"{r['cluster_failures_expected_count']:,.1f} expected on "
                    f"{r['cluster_accelerators_count']:,} accelerators during the run",
                ),
                (
                    "interruptions",
                    f"{r['unexpected_interruptions_count']:,.0f} unexpected"
                    f"{band(racc, 'unexpected_interruptions_count', lambda v: f'{v:,.0f}')} + "
                    f"{r['planned_interruptions_count']:,.0f} planned (MTBF "
                    f"{human_seconds(r['mtbf_s']) if r['mtbf_s'] else 'infinite: no failure rates'})",
                ),
                ("largest causes", causes),
                (
                    "checkpoint",
                    f"{ck['checkpoint_bytes'] / GB:,.0f} GB ({ck['source']}), {ck['mode']}: write "
                    f"{human_seconds(ck['write_s'])}, training blocked {human_seconds(ck['blocking_s'])}, "
                    f"load {human_seconds(ck['load_s'])}",
                ),
                (
                    "checkpoint interval",
                    f"{human_seconds(r['checkpoint_interval_s'])} ({r['checkpoint_interval_source']})",
                ),
                (
                    "downtime per interruption",
                    f"{human_seconds(r['downtime_mean_s'])} ("
                    + ", ".join(
                        f"{k.replace('_', ' ')} {human_seconds(v)}" for k, v in r["downtime_parts_s"].items() if v > 0
                    )
                    + ")",
                ),
                ("checkpoint storage", r["storage_source"]),
                (
                    "spare nodes",
                    f"{r['spare_nodes']} ({r['spare_nodes_source']}; "
                    f"{r['spare_accelerator_hours']:,.0f} accelerator-hours held)",
                ),
                (
                    "accelerator-hours lost",
                    f"{r['lost_accelerator_hours']:,.0f} (checkpoints, lost work, restarts, waits)",
                ),
            ]
        ),
        accuracy_line(racc),
    ]


def _memory(args: argparse.Namespace) -> tuple[Any, str]:
    r = app.memory(app.load_scenario(args.scenario, args.set))
    sc, rep = r.scenario, r.report
    obj = r.to_dict()
    rows = [
        [
            r.label,
            f"{r.weights_bytes / GB:.1f}",
            f"{r.gradients_bytes / GB:.1f}",
            f"{r.optimizer_states_bytes / GB:.1f}",
            f"{r.activations_bytes / GB:.1f}",
            f"{r.other_bytes / GB:.1f}",
            f"{r.total_bytes / GB:.1f}",
            f"{r.host_offload_bytes / GB:.1f}",
            "yes" if r.fits else "NO",
        ]
        for r in rep.rows
    ]
    text = "\n".join(
        [
            f"{sc.model.id}: {rep.total_params / 1e9:.2f} B parameters, {rep.trainable_params / 1e9:.4g} B trainable; "
            f"capacity {rep.capacity_bytes / GB:.1f} GB per {sc.cluster.accelerator.id}",
            "",
            table(
                [
                    "configuration",
                    "weights GB",
                    "grads GB",
                    "optimizer GB",
                    "activations GB",
                    "other GB",
                    "total GB",
                    "host GB",
                    "fits",
                ],
                rows,
            ),
            "",
            *[f"- {c}" for c in rep.conventions],
            "",
            accuracy_line(obj.get("accuracy")),
        ]
    )
    return obj, text


def register(sub: Any) -> None:
    """Add ``aiinfra train`` and ``aiinfra memory``, their arguments and handlers, to the CLI's subparsers ``sub``."""
    p = sub.add_parser("train", help=COMMAND_HELP["train"])
    add_scenario_args(p)
    p.set_defaults(handler=_train)
    m = sub.add_parser("memory", help=COMMAND_HELP["memory"])
    add_scenario_args(m)
    m.set_defaults(handler=_memory)
