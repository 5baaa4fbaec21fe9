"""Failures, checkpoints, restarts and goodput (aiinfra.reliability): hand calculations and the Llama 3 check."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from aiinfra import app
from aiinfra.app.tables import reliability_table
from aiinfra.errors import SpecError
from aiinfra.reliability.checkpoint import checkpoint_times, young_daly_interval_s
from aiinfra.reliability.goodput import Downtime, downtime, expected_run, poisson_sf, spare_wait
from aiinfra.reliability.montecarlo import simulate
from aiinfra.reliability.rates import check_row, component_rates, job_rates
from aiinfra.specs.scenario import parse_scenario

HOURS_54_DAYS = 54 * 24.0
# Llama 3 Table 5 counts: GPU-level rows (faulty GPU, HBM3, SRAM, system processor, SDC, thermal) and the rest
GPU_ROWS_COUNT = 148 + 72 + 19 + 17 + 6 + 6
NODE_ROWS_COUNT = 419 - GPU_ROWS_COUNT


def test_job_rate_sums_component_rates() -> None:
    # one 8-GPU node: 8 × (268 / (16,384 GPUs × 1,296 h)) + 1 × (151 / (2,048 nodes × 1,296 h)) per hour
    r = job_rates(reliability_table(), 8, 1, include_planned=False)
    hand = 8 * GPU_ROWS_COUNT / (16_384 * HOURS_54_DAYS) + NODE_ROWS_COUNT / (2_048 * HOURS_54_DAYS)
    assert r.unexpected_per_s * 3600 == pytest.approx(hand, rel=1e-12)
    assert r.planned_per_s == 0.0
    # a rate override replaces one row's rate, the scale multiplies all
    r2 = job_rates(
        reliability_table(), 8, 1, include_planned=False, overrides={"llama3-faulty-gpu": 0.0}, scale_ratio=2.0
    )
    assert r2.unexpected_per_s * 3600 == pytest.approx(2 * (hand - 8 * 148 / (16_384 * HOURS_54_DAYS)), rel=1e-12)


def test_llama3_interruptions_calibration() -> None:
    # CALIBRATION, not a prediction: the rates are the paper's counts over the same 16,384 GPUs and 54 days, so the
    # expected number over 54 days must give the counts back: 419 unexpected, 47 planned (Llama 3 §3.3.4).
    r = job_rates(reliability_table(), 16_384, 2_048)
    assert r.unexpected_per_s * 54 * 86_400 == pytest.approx(419, rel=1e-9)
    assert r.planned_per_s * 54 * 86_400 == pytest.approx(47, rel=1e-9)
    assert 1 / r.unexpected_per_s / 3600 == pytest.approx(54 * 24 / 419, rel=1e-9)  # one every 3.09 h
    assert check_row(reliability_table(), "llama3-405b-ettr")["failures_count"] == 466


def test_young_daly_interval() -> None:
    assert young_daly_interval_s(60, 3_600) == pytest.approx(math.sqrt(2 * 60 * 3_600))  # 657.3 s


def test_expected_time_daly_by_hand() -> None:
    # λ = 1/h, τ = 600 s, δ = 60 s, fixed downtime R = 300 s, 6,000 s of training (10 segments).
    # Daly 2006: E[T] = M·e^{R/M}·(e^{(τ+δ)/M} − 1)·T_s/τ with M = 3,600 s.
    m = 3_600.0
    hand = m * math.exp(300 / m) * (math.exp(660 / m) - 1) * 6_000 / 600
    e = expected_run(
        useful_s=6_000,
        interval_s=600,
        blocking_s=60,
        unexpected_per_s=1 / m,
        down=Downtime(base_s=300, wait_s=0, wait_probability_frac=0),
        planned_per_s=0,
        planned_downtime_s=0,
    )
    assert e.wall_s == pytest.approx(hand, rel=1e-12)  # 7,833 s
    assert e.ettr_frac == pytest.approx(6_000 / hand, rel=1e-12)
    assert e.unexpected_interruptions_count == pytest.approx(hand / m, rel=1e-12)
    # first order (Young 1974): waste ≈ δ/τ + λ(τ/2 + R) = 0.1 + 0.1833; ETTR ≈ 1/(1 + waste) to first order
    assert e.ettr_frac == pytest.approx(1 / (1 + 0.1 + (300 + 330) / m), rel=0.03)


def test_planned_interruptions_stretch() -> None:
    # no unexpected failures; planned every 10 h costing 1 h: time = 10 × 110 s / (1 − 0.1)
    e = expected_run(
        useful_s=1_000,
        interval_s=100,
        blocking_s=10,
        unexpected_per_s=0.0,
        down=Downtime(base_s=0, wait_s=0, wait_probability_frac=0),
        planned_per_s=1 / 36_000,
        planned_downtime_s=3_600,
    )
    assert e.wall_s == pytest.approx(1_100 / 0.9)


def test_spares_queue_by_hand() -> None:
    assert spare_wait(1e-4, 1e4, 0) == (1.0, 1e4)  # no spare: every repair failure waits the whole repair
    busy, wait = spare_wait(1e-4, 1e4, 1)  # one node in repair on average: P(N ≥ 1) = 1 − e^{−1}
    assert busy == pytest.approx(1 - math.exp(-1))
    assert wait == pytest.approx(1e4 / 2)
    assert poisson_sf(2, 1.0) == pytest.approx(1 - 2 * math.exp(-1))


def test_checkpoint_times_by_hand() -> None:
    kw = {
        "nodes": 2,
        "accelerators": 16,
        "storage_write_bytes_per_s": 1e10,
        "storage_read_bytes_per_s": None,
        "node_storage_bytes_per_s": 1e9,
        "snapshot_bytes_per_s_per_accelerator": 50e9,
        "peer_bytes_per_s_per_accelerator": 25e9,
    }
    sync = checkpoint_times(1e12, mode="synchronous", **kw)  # type: ignore[arg-type]
    assert sync.write_s == pytest.approx(1e12 / 2e9)  # the nodes' 2 GB/s bound it, not the 10 GB/s tier
    assert sync.blocking_s == sync.write_s
    asyn = checkpoint_times(1e12, mode="asynchronous", **kw)  # type: ignore[arg-type]
    assert asyn.blocking_s == pytest.approx(1e12 / 16 / 50e9)  # 1.25 s device-to-host per accelerator
    mem = checkpoint_times(1e12, mode="in-memory", **kw)  # type: ignore[arg-type]
    assert mem.load_s == pytest.approx(1e12 / 16 / 25e9)


def _mc_case(trials: int, seed: int) -> tuple[float, float, float]:
    lam = 1 / 3_600
    down = downtime(
        detection_s=600,
        restart_s=300,
        load_s=30,
        unexpected_per_s=lam,
        repair_per_s=0.6 * lam,
        repair_s=86_400,
        spare_nodes=2,
    )
    kw = {
        "useful_s": 30 * 86_400.0,
        "interval_s": 900.0,
        "blocking_s": 30.0,
        "unexpected_per_s": lam,
        "down": down,
        "planned_per_s": 1e-5,
        "planned_downtime_s": 330.0,
    }
    e = expected_run(**kw)  # type: ignore[arg-type]
    d = simulate(**kw, trials=trials, seed=seed)  # type: ignore[arg-type]
    return e.wall_s, d.wall_mean_s, d.wall_p90_s


def test_monte_carlo_mean_matches_analytic_and_is_seeded() -> None:
    analytic, mean, p90 = _mc_case(400, seed=7)
    assert mean == pytest.approx(analytic, rel=0.03)
    assert p90 > mean
    assert _mc_case(400, seed=7) == (analytic, mean, p90)  # same seed, same answer
    assert _mc_case(400, seed=8)[1] != mean


def test_bad_input() -> None:
    with pytest.raises(SpecError, match="negative"):
        job_rates(reliability_table(), 8, 1, overrides={"llama3-faulty-gpu": -1.0})
    with pytest.raises(SpecError, match="no such component"):
        job_rates(reliability_table(), 8, 1, overrides={"faulty-gpu-typo": 1e-6})
    base = {
        "model": "gpt3-175b",
        "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 8},
        "training": {"tokens": 1e9, "seq_len": 2048, "global_batch_seqs": 8},
    }
    with pytest.raises(SpecError, match="restart_s"):
        parse_scenario({**base, "reliability": {"storage_write_bytes_per_s": 1e10, "repair_s": 3600}})
    with pytest.raises(SpecError, match="rates_per_unit_hour"):
        parse_scenario(
            {
                **base,
                "reliability": {
                    "storage_write_bytes_per_s": 1e10,
                    "repair_s": 3600,
                    "restart_s": 60,
                    "rates_per_unit_hour": {"llama3-nic": -1},
                },
            }
        )


def test_llama3_405b_example_train_and_cost() -> None:
    sc = app.load_scenario("examples/train-reliability-llama3-405b.yaml")
    r = app.train(sc)
    rel = r.to_dict()["reliability"]
    assert rel["time_to_train_no_failures_s"] == r.best.time_to_train_s  # the no-failure figure is unchanged
    # the calibrated rate gives 419 unexpected interruptions per 54 days, whatever the run's length (to within the
    # 0.3 % of the time spent in planned stops: 47 per 54 days × 5.05 min, when the model exposes no failures)
    per_54_days = rel["unexpected_interruptions_count"] / rel["time_to_train_mean_s"] * 54 * 86_400
    assert per_54_days == pytest.approx(419, rel=0.005)
    assert per_54_days < 419
    # PREDICTION: the paper reports "higher than 90 %" effective training time. With 10-min NCCL-timeout
    # detection, a 5-min restart (assumed) and 2 TB/s storage the model gives ≈ 89.8 %: within 2 points of it.
    assert 0.88 <= rel["ettr_frac"] <= 0.95
    assert rel["time_to_train_p50_s"] <= rel["time_to_train_p90_s"]
    assert rel["time_to_train_mean_s"] > rel["time_to_train_no_failures_s"]
    bill = app.cost(sc).to_dict()
    assert bill["duration_s"] == pytest.approx(rel["time_to_train_mean_s"])
    assert "with failures" in bill["duration_source"]
    assert bill["count"] == 16_384 + 8 * rel["spare_nodes"]


def test_cli_train_json_and_bad_input(tmp_yaml) -> None:  # type: ignore[no-untyped-def]
    from .conftest import EXAMPLES, run_cli

    example = str(EXAMPLES / "train-175b-dgx-h100-30days-reliability.yaml")
    res = run_cli("train", example, "--json", "--set", "reliability.trials=50")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    plain = json.loads(run_cli("train", str(EXAMPLES / "train-175b-dgx-h100-30days.yaml"), "--json").stdout)
    assert plain["reliability"] is None
    assert obj["time_to_train_s"] == plain["time_to_train_s"]  # existing keys keep their meaning
    assert obj["reliability"]["monte_carlo"]["trials"] == 50
    # no failures at all (every rate zero): the time is the no-failure time plus one checkpoint and the first start
    # (startup_s defaults to restart_s, 300 s in the example)
    zero = ",".join(f"{k}: 0" for k in [r.id for r in component_rates(reliability_table())])
    res0 = run_cli("train", example, "--json", "--set", f"reliability.rates_per_unit_hour={{{zero}}}")
    rel0 = json.loads(res0.stdout)["reliability"]
    ck = rel0["checkpoint"]["blocking_s"]
    assert rel0["time_to_train_mean_s"] == pytest.approx(plain["time_to_train_s"] + ck + 300)
    assert rel0["badput_s"]["initialisation_s"] == 300
    assert rel0["mtbf_s"] is None
    bad = run_cli("train", example, "--set", "reliability.rates_per_unit_hour={llama3-nic: -1}")
    assert bad.returncode == 2 and "rates_per_unit_hour" in bad.stderr
    unknown = run_cli("train", example, "--set", "reliability.rates_per_unit_hour={gpu-typo: 1e-6}")
    assert unknown.returncode == 2 and "no such component" in unknown.stderr


def _per_node_day(row_id: str) -> float:
    row = check_row(reliability_table(), row_id)
    return float(row["failures_count"]) / (float(row["exposure_units_count"]) * float(row["exposure_days"]))  # type: ignore[arg-type]


def test_llama3_rate_between_metas_research_clusters() -> None:
    # PREDICTION across clusters: the Llama 3 rows (419 unexpected over 2,048 nodes × 54 days = 3.79 per 1000
    # node-days) against Kokolis et al. 2024's whole-cluster rates, RSC-2 2.34 and RSC-1 6.50 per 1000 node-days.
    llama3_per_node_day = job_rates(reliability_table(), 8, 1, include_planned=False).unexpected_per_s * 86_400
    assert llama3_per_node_day * 1000 == pytest.approx(419 / (2_048 * 54) * 1000, rel=1e-9)  # 3.79
    assert _per_node_day("kokolis-rsc2") < llama3_per_node_day < _per_node_day("kokolis-rsc1")


def test_kokolis_projection_from_the_series_model() -> None:
    # Scaling every row so a node fails at RSC-1's 6.50 per 1000 node-days, the series model's MTTF of a
    # 16,384-GPU job (2,048 nodes) is 24 h / (2,048 × 6.5e-3) = 1.80 h: the paper's projection (1.8 h).
    llama3 = job_rates(reliability_table(), 8, 1, include_planned=False).unexpected_per_s
    ratio = _per_node_day("kokolis-rsc1") / (llama3 * 86_400)
    r = job_rates(reliability_table(), 16_384, 2_048, include_planned=False, scale_ratio=ratio)
    mttf_h = 1 / r.unexpected_per_s / 3600
    assert mttf_h == pytest.approx(24 / (2_048 * 6.5e-3), rel=1e-9)
    projected = check_row(reliability_table(), "kokolis-rsc1")["mttf_projected_16384_gpus_h"]
    assert mttf_h == pytest.approx(float(projected), abs=0.05)  # type: ignore[arg-type]


def test_opt175b_hardware_restarts_held_out() -> None:
    # PREDICTION on a run the rates never saw: OPT-175B, 124 nodes of 8 A100 for about 60 days. The Llama 3
    # hardware rows (356 of the 419 need a repair) predict 356 / (2,048 × 54) × 124 × 60 = 23.9 hardware
    # interruptions; the OPT logbook reports at least 35. The 2024 H100 rates under-predict the 2021 A100 run by
    # at least 32 % (23.9 / 35 = 0.68; docs/reliability.md says so); the test pins the gap within a factor of two.
    predicted = job_rates(reliability_table(), 992, 124, include_planned=False).repair_per_s * 60 * 86_400
    assert predicted == pytest.approx(356 / (2_048 * 54) * 124 * 60, rel=1e-9)
    observed_at_least = float(check_row(reliability_table(), "opt175b-hardware-restarts")["failures_count"])  # type: ignore[arg-type]
    assert 0.5 < predicted / observed_at_least < 1.0


# --- issue 30: rates by hardware and age, recovery as it happens, achieved checkpoint I/O, badput ---------------

LLAMA3_PER_1000_NODE_DAYS = 419 / (2_048 * 54) * 1000  # 3.79


#: five A100 operators' rates over Llama 3's rate of the same definition, by hand from their publications (per 1000
#: node-days): RSC-1 6.50 and RSC-2 2.34 infrastructure failures against Llama 3's 419 unexpected less its 54
#: software bugs (user-program errors, which Kokolis et al. do not count); OPT 35 + 70 hardware restarts in 124 nodes ×
#: 60 days at 2 restarts per failure (the chronicles: a replacement machine was bad again "more often than not", q =
#: 0.5), GLM-130B 10 in 96 × 54, MPT-7B 4 in 55 × 9.5 against Llama 3's 324 hardware interruptions (Table 5's
#: categories GPU 268, Network 35 and Host 21; not its 32 unplanned host maintenance, a category of its own)
LLAMA3_HARDWARE_PER_1000_NODE_DAYS = 324 / (2_048 * 54) * 1000  # 2.93
LLAMA3_INFRASTRUCTURE_PER_1000_NODE_DAYS = (419 - 54) / (2_048 * 54) * 1000  # 3.30
A100_OPERATOR_RATIOS = {
    "rsc1": 6.50 / LLAMA3_INFRASTRUCTURE_PER_1000_NODE_DAYS,
    "rsc2": 2.34 / LLAMA3_INFRASTRUCTURE_PER_1000_NODE_DAYS,
    "opt": 105 / 2 / (124 * 60) * 1000 / LLAMA3_HARDWARE_PER_1000_NODE_DAYS,
    "glm": 10 / (96 * 54) * 1000 / LLAMA3_HARDWARE_PER_1000_NODE_DAYS,
    "mpt": 4 / (55 * 9.5) * 1000 / LLAMA3_HARDWARE_PER_1000_NODE_DAYS,
}


def _geo(values: list[float]) -> tuple[float, float]:
    """Geometric mean and geometric standard deviation (sample)."""
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    return math.exp(mean), math.exp(sd)


def test_rates_by_generation_and_memory() -> None:
    from aiinfra.reliability.rates import hardware_rates

    # A100: one vote per operator, geometric mean 1.42, operator spread (geometric sd) 1.97
    gm, gsd = _geo(list(A100_OPERATOR_RATIOS.values()))
    fam, mem = hardware_rates(reliability_table(), "nvidia-a100-sxm4-80gb")
    assert fam.basis == "measured" and fam.rate_ratio == pytest.approx(gm, abs=0.005)
    assert fam.uncertainty_ratio == pytest.approx(gsd, abs=0.005)
    assert mem.basis == "nearest"  # HBM2e: no published per-memory count outside the reserved sources
    fam, mem = hardware_rates(reliability_table(), "nvidia-h100-sxm5-80gb")
    assert (fam.rate_ratio, fam.basis, mem.id) == (1.0, "measured", "memory-hbm3")
    assert fam.uncertainty_ratio == pytest.approx(gsd, abs=0.005)  # one operator: the spread between operators
    # no B200 rate: the nearest generation's, wider band
    fam, _ = hardware_rates(reliability_table(), "nvidia-b200-sxm-180gb")
    assert fam.basis == "nearest" and fam.rate_ratio == 1.0
    assert fam.uncertainty_ratio == pytest.approx(gsd * gm, abs=0.01)  # 2.79: the spread × one generation step
    assert hardware_rates(reliability_table(), "google-tpu-v5p")[0].id == "family-default"


def test_memory_uncertainty_acts_on_the_memory_share_only() -> None:
    from aiinfra.reliability.rates import HardwareRate, memory_share_frac, rate_uncertainty_ratio

    # Llama 3's 8-GPU node: 8 × 72 / (16,384 × 1,296) HBM3 failures per hour over the node's 419-row rate
    per_h = 1 / (2_048 * HOURS_54_DAYS)
    node = 8 * GPU_ROWS_COUNT / (16_384 * HOURS_54_DAYS) + NODE_ROWS_COUNT * per_h
    f = 8 * 72 / (16_384 * HOURS_54_DAYS) / node
    assert memory_share_frac(reliability_table(), 8) == pytest.approx(f, rel=1e-12)  # 0.172 = 72 / 419
    fam = HardwareRate(id="f", basis="measured", rate_ratio=1.0, uncertainty_ratio=2.0, source="s")
    mem = HardwareRate(id="m", basis="nearest", rate_ratio=1.0, uncertainty_ratio=3.0, source="s")
    # u = 2 × (1 + 0.2 × (3 − 1)) = 2.8 for a 20 % memory share; a measured memory row (u = 1) leaves u_fam
    assert rate_uncertainty_ratio(fam, mem, 0.2) == pytest.approx(2.8)
    assert rate_uncertainty_ratio(fam, replace(mem, uncertainty_ratio=1.0), 0.2) == pytest.approx(2.0)


def test_age_ratio_by_hand() -> None:
    from aiinfra.reliability.rates import age_ratio

    # new cluster, 3× early-life excess decaying over 30 days, at 30 days: 1 + 2/e
    assert age_ratio(
        30, burn_in_ratio=3, burn_in_days=30, wear_out_onset_days=1095, wear_out_ratio_per_year=0
    ) == pytest.approx(1 + 2 / math.e)
    # two years past the onset at +0.5 per year: 2.0
    assert age_ratio(
        1095 + 730, burn_in_ratio=1, burn_in_days=None, wear_out_onset_days=1095, wear_out_ratio_per_year=0.5
    ) == pytest.approx(2.0)


def test_planned_restarts_per_job_not_per_node() -> None:
    per_hour = 47 / (54 * 24)  # Llama 3: 47 planned in 54 days, one job
    assert job_rates(reliability_table(), 8, 1).planned_per_s * 3600 == pytest.approx(per_hour)
    assert job_rates(reliability_table(), 16_384, 2_048).planned_per_s * 3600 == pytest.approx(per_hour)
    assert job_rates(reliability_table(), 8, 1, planned_per_hour=1 / 24).planned_per_s * 86_400 == pytest.approx(1.0)


def test_retry_chain_two_attempts_at_half() -> None:
    from aiinfra.reliability.goodput import retry_attempts_mean

    assert retry_attempts_mean(0.5) == 2.0  # geometric attempts: 1 / (1 − p)
    d = Downtime(base_s=0, wait_s=0, wait_probability_frac=0, restart_attempt_s=100, restart_failure_prob=0.5)
    assert d.mean_s == 200.0
    lam = 1e-3  # E[e^{−λ·100·K}], K ~ Geom(0.5): 0.5e^{−0.1} / (1 − 0.5e^{−0.1})
    assert d.laplace(lam) == pytest.approx(0.5 * math.exp(-0.1) / (1 - 0.5 * math.exp(-0.1)))


def test_retry_chain_only_for_failures_that_swap_a_machine() -> None:
    """p = 0.5 per attempt: 2 expected attempts for a failure that needs a node swapped (needs_repair), 1 for a
    crash that restarts on the same nodes; a mix of 30 % swaps gives 0.3 × 2 + 0.7 × 1 = 1.3."""
    lam = 1e-3

    def down(repair_share: float):  # type: ignore[no-untyped-def]
        return downtime(
            detection_s=0,
            restart_s=100,
            load_s=0,
            unexpected_per_s=lam,
            repair_per_s=repair_share * lam,
            repair_s=0,
            spare_nodes=0,
            restart_failure_prob=0.5,
        )

    assert down(1.0).restart_attempts_mean == 2.0 and down(1.0).parts_mean_s["restart"] == 200.0
    assert down(0.0).restart_attempts_mean == 1.0 and down(0.0).parts_mean_s["restart"] == 100.0
    assert down(0.3).restart_attempts_mean == pytest.approx(1.3)
    # E[e^{−λ·restart}]: 0.3 × the geometric chain's + 0.7 × one attempt's (λ·100 = 0.1)
    e = math.exp(-0.1)
    assert down(0.3).laplace(lam) == pytest.approx(0.3 * 0.5 * e / (1 - 0.5 * e) + 0.7 * e)


def test_lemon_node_excluded_after_k_failures() -> None:
    from aiinfra.reliability.goodput import lemon_exposure_s

    r, k = 1e-6, 3  # a node's rate per s; a lemon fails 10× as often, excluded at its 3rd failure
    horizon = 1e9  # long run: exclusion is certain
    exposure = lemon_exposure_s(r, 10, k, horizon)
    assert exposure == pytest.approx(k / (10 * r), rel=1e-6)  # mean of a Gamma(k, 10r) time
    assert 10 * r * exposure == pytest.approx(k, rel=1e-6)  # it causes k failures, then it is gone
    # short run (T = 1/(10r)): E[min(τ, T)] = (1/(10r)) Σ_{j=1..3} P(Poisson(1) ≥ j)
    hand = sum(poisson_sf(j, 1.0) for j in (1, 2, 3)) / (10 * r)
    assert lemon_exposure_s(r, 10, k, 1 / (10 * r)) == pytest.approx(hand)


def test_human_response_by_hour() -> None:
    from aiinfra.reliability.goodput import human_response_mixture

    # people on site 08:00-20:00: half the failures wait 15 min, the other half 2 h
    mix = human_response_mixture(900, 7200, 8, 20)
    assert sum(p * d for p, d in mix) == pytest.approx(0.5 * 900 + 0.5 * 7200)
    night_shift = human_response_mixture(900, 7200, 22, 6)  # day hours 22:00-06:00 wrap past midnight: 8 of 24
    assert sum(p * d for p, d in night_shift) == pytest.approx(8 / 24 * 900 + 16 / 24 * 7200)


def test_checkpoint_time_at_16_percent_of_rated() -> None:
    # 1 TB to a tier rated 250 GB/s achieving 16 %: 1e12 / (0.16 × 250e9) = 25 s; loading at 22 % of 700 GB/s
    ck = checkpoint_times(
        1e12,
        nodes=64,
        accelerators=512,
        mode="synchronous",
        storage_write_bytes_per_s=250e9,
        storage_read_bytes_per_s=700e9,
        node_storage_bytes_per_s=None,
        snapshot_bytes_per_s_per_accelerator=63e9,
        peer_bytes_per_s_per_accelerator=None,
        efficiency_frac=0.16,
        read_efficiency_frac=0.22,
    )
    assert ck.write_s == pytest.approx(25.0)
    assert ck.load_s == pytest.approx(1e12 / (0.22 * 700e9))  # 6.49 s
    # consolidated: one writer at 2 GB/s bounds it instead: 500 s
    one = checkpoint_times(
        1e12,
        nodes=64,
        accelerators=512,
        mode="synchronous",
        storage_write_bytes_per_s=250e9,
        storage_read_bytes_per_s=None,
        node_storage_bytes_per_s=2e9,
        snapshot_bytes_per_s_per_accelerator=63e9,
        peer_bytes_per_s_per_accelerator=None,
        efficiency_frac=0.16,
        writers_count=1,
    )
    assert one.write_s == pytest.approx(500.0)


def test_detection_by_kind_in_the_downtime() -> None:
    # λ = 1/h of which 1/4 hangs (600 s watchdog) and 3/4 crashes (30 s): mean detection 0.25·600 + 0.75·30
    d = downtime(
        detection_s=600,
        restart_s=300,
        load_s=60,
        unexpected_per_s=1 / 3600,
        repair_per_s=0,
        repair_s=3600,
        spare_nodes=0,
        crash_detection_s=30,
        hang_per_s=0.25 / 3600,
    )
    assert d.parts_mean_s["detection"] == pytest.approx(0.25 * 600 + 0.75 * 30)
    assert d.mean_s == pytest.approx(172.5 + 300 + 60)


def _small_plan(**extra: object):  # type: ignore[no-untyped-def]
    from aiinfra.reliability.plan import plan_reliability
    from aiinfra.specs.common import validate
    from aiinfra.specs.reliability import ReliabilityInput

    ri = validate(
        ReliabilityInput,
        {"storage_write_bytes_per_s": 1e11, "restart_s": 300, "repair_s": 86_400, "trials": 0, **extra},
        where="reliability",
    )
    return plan_reliability(
        ri,
        useful_s=20 * 86_400,
        accelerators=1024,
        per_node=8,
        checkpoint_bytes=1e12,
        checkpoint_source="test",
        peer_bytes_per_s_per_accelerator=None,
        accelerator_id="nvidia-h100-sxm5-80gb",
        cluster_accelerators=4096,
        table=reliability_table(),
    )


def test_badput_adds_up_and_cluster_count() -> None:
    r = _small_plan(
        rollbacks={"per_day": 0.1, "detection_s": 1800, "rollback_s": 3600},
        slow_nodes={"per_node_per_day": 1e-3, "slowdown_frac": 0.3, "noticed_s": 7200},
        data_loading_stall_frac=0.02,
        warmup_s=120,
    )
    assert sum(r.badput_s.values()) == pytest.approx(r.expected.wall_s - r.no_failure_s, rel=1e-9)
    assert r.badput_s["data_loading_s"] == pytest.approx(20 * 86_400 * (1 / 0.98 - 1))
    assert r.badput_s["rollbacks_s"] > 0 and r.badput_s["slow_nodes_s"] > 0
    # expected (not drawn) cluster-wide failures: 512 nodes × a node's rate × E[T]
    node_per_s = job_rates(reliability_table(), 8, 1, include_planned=False).unexpected_per_s
    assert r.cluster_failures_expected_count == pytest.approx(512 * node_per_s * r.expected.wall_s)
    lo, hi = r.band_s
    assert lo is not None and hi is not None and lo < r.expected.wall_s < hi


def test_lemons_retries_and_storage_lengthen_the_run() -> None:
    base = _small_plan()
    assert (
        _small_plan(
            lemon_nodes={"share_frac": 0.05, "rate_ratio": 10, "exclude_after_count": 2}
        ).expected.unexpected_interruptions_count
        > base.expected.unexpected_interruptions_count
    )
    # q = 0.5 doubles the 300 s restart only for the failures that swap a machine: Llama 3's unexpected rows less
    # software bug (54), NCCL watchdog (7) and dependency (2), 356 of 419
    chained = _small_plan(restart_failure_prob=0.5)
    assert chained.downtime_mean_s == pytest.approx(base.downtime_mean_s + 300 * 356 / 419)
    assert chained.restart_attempts_mean == pytest.approx(2 * 356 / 419 + 63 / 419)
    slow = _small_plan(storage_kind="distributed-object-store")
    assert slow.checkpoint.write_s == pytest.approx(base.checkpoint.write_s / 0.286)
    with pytest.raises(SpecError, match="storage_kind"):
        _small_plan(storage_kind="tape")


def test_slow_node_swap_restarts_as_a_chain() -> None:
    """A slow node is swapped for another machine, so its restart is a chain like a repair's: 8 nodes at 1e-3 per
    node-day slowed 30 % for 7,200 s, restart 300 s, load 30 s, warm-up 120 s. q = 0 costs 0.3 × 7200 + 300 + 30 +
    120 = 2,610 s a stop; q = 0.5 adds one failed attempt on average, 1 / (1 − 0.5) − 1 = 1, of 300 s: 2,910 s. A
    rollback restarts on the same nodes, once: 1800 + 900 / 2 + 3600 + 450 = 6,300 s whatever q."""
    from aiinfra.reliability.plan import _stops
    from aiinfra.specs.common import validate
    from aiinfra.specs.reliability import ReliabilityInput

    def stops(q: float) -> dict[str, tuple[float, float]]:
        ri = validate(
            ReliabilityInput,
            {
                "storage_write_bytes_per_s": 1e11,
                "restart_s": 300,
                "repair_s": 86_400,
                "warmup_s": 120,
                "restart_failure_prob": q,
                "slow_nodes": {"per_node_per_day": 1e-3, "slowdown_frac": 0.3, "noticed_s": 7200},
                "rollbacks": {"per_day": 0.1, "detection_s": 1800, "rollback_s": 3600},
            },
            where="reliability",
        )
        return {name: (rate, cost) for name, rate, cost in _stops(ri, nodes=8, interval_s=900.0, load_s=30.0)}

    plain, chained = stops(0.0), stops(0.5)
    assert plain["slow_nodes"] == pytest.approx((8e-3 / 86_400, 2610.0))
    assert chained["slow_nodes"] == pytest.approx((8e-3 / 86_400, 2910.0))
    assert plain["rollbacks"] == chained["rollbacks"] == pytest.approx((0.1 / 86_400, 6300.0))


def test_monte_carlo_matches_analytic_with_recovery_parts() -> None:
    lam = 1 / 3_600
    down = downtime(
        detection_s=600,
        restart_s=300,
        load_s=30,
        unexpected_per_s=lam,
        repair_per_s=0.6 * lam,
        repair_s=86_400,
        spare_nodes=2,
        crash_detection_s=20,
        hang_per_s=0.1 * lam,
        human_s=((0.5, 900.0), (0.5, 7200.0)),
        restart_failure_prob=0.3,
    )
    kw = {
        "useful_s": 10 * 86_400.0,
        "interval_s": 900.0,
        "blocking_s": 30.0,
        "unexpected_per_s": lam,
        "down": down,
        "planned_per_s": 1e-5,
        "planned_downtime_s": 330.0,
        "other_stops": (("rollbacks", 1e-5, 5000.0),),
        "fixed_s": 600.0,
    }
    e = expected_run(**kw)  # type: ignore[arg-type]
    d = simulate(**kw, trials=400, seed=3)  # type: ignore[arg-type]
    assert d.wall_mean_s == pytest.approx(e.wall_s, rel=0.03)


def test_reliability_validation_rows_sealed_by_hash_and_predicted_by_hand() -> None:
    from aiinfra.reliability import validation as v

    open_rows, sealed_rows = v.read_rows("open"), v.read_rows("sealed")
    assert all(not v.sealed(r["id"]) for r in open_rows) and all(v.sealed(r["id"]) for r in sealed_rows)
    assert len(open_rows) + len(sealed_rows) >= 20
    assert all(r["source_url"].startswith("https://") for r in open_rows + sealed_rows)
    ids = [r["id"] for r in open_rows + sealed_rows]
    assert len(ids) == len(set(ids))
    # GLM-130B: 96 A100 nodes × 54 days × Llama 3's hardware rate per node-day (324 / (2,048 × 54): GPU, network and
    # host rows) × the A100 ratio of the catalog row (1.42)
    glm = next(r for r in open_rows if r["id"] == "glm130b-hardware-interruptions")
    hand = 96 * 54 * 324 / (2_048 * 54) * 1.42
    assert v.predict(reliability_table(), glm, loo_ratio=0.0) == pytest.approx(hand, rel=1e-9)
    # leave-one-source-out for Kokolis et al.'s rows: the A100 ratio of the other operators' open rows (OPT, GLM-130B,
    # MPT-7B), one vote each, not RSC
    loo = v._loo_ratio(reliability_table(), open_rows)
    assert loo == pytest.approx(_geo([A100_OPERATOR_RATIOS[k] for k in ("opt", "glm", "mpt")])[0], rel=1e-9)  # 1.61
    # RSC-1 counts infrastructure failures: Llama 3's unexpected rows less the software bugs, (419 − 54) per 2,048 × 54
    rsc1 = next(r for r in open_rows if r["id"] == "rsc1-failures-per-1000-node-days")
    assert v.predict(reliability_table(), rsc1, loo) == pytest.approx(365 / (2_048 * 54) * 1000 * loo, rel=1e-9)
    # a count of restart attempts with the source's per-attempt failure probability q = 0.5: 2 attempts per failure
    # (OPT: 124 nodes × 60 days × 324 hardware per 2,048 × 54 node-days × 1.42 × 2); failures counted once
    opt = next(r for r in open_rows if r["id"] == "opt175b-paper-automatic-hardware-restarts")
    hand = 124 * 60 * 324 / (2_048 * 54) * 1.42 * 2
    assert v.predict(reliability_table(), opt, loo_ratio=0.0) == pytest.approx(hand, rel=1e-9)
    hol = next(r for r in open_rows if r["id"] == "opt175b-auto-recovered-holidays")
    assert v.predict(reliability_table(), hol, loo_ratio=0.0) == pytest.approx(124 * 7 * 324 / (2_048 * 54) * 1.42)


def test_later_rounds_candidates_sealed_before_reading() -> None:
    """Every candidate of the later rounds' seal lists (second to fourth) is in the file its hash says, or named as
    not entered."""
    from aiinfra.reliability import validation as v

    entered = {r["id"]: split for split in ("open", "sealed") for r in v.read_rows(split)}
    for seal_list in v.SEAL_LISTS:
        lines = seal_list.read_text().splitlines()
        listed = {ln.split(",")[0]: ln.split(",")[1] for ln in lines if ln and not ln.startswith("#")}
        assert listed and all((mark == "SEALED") == v.sealed(i) for i, mark in listed.items())
        start = next((k for k, ln in enumerate(lines) if ln.startswith("# Not entered")), len(lines))
        not_entered = "\n".join(lines[start:])
        for i, mark in listed.items():
            if i in entered:
                assert entered[i] == ("sealed" if mark == "SEALED" else "open")
            else:
                assert i in not_entered, f"{i}: listed in {seal_list.name}, neither entered nor named as not entered"


def test_share_and_link_rows_by_hand() -> None:
    from aiinfra.reliability import validation as v

    # a share of causes is the ratio of the named rows' rates on one 8-GPU node (the generation's ratio cancels):
    # Crusoe's InfiniBand share against Llama 3's network rows (switch/cable 35, NIC 7) over its hardware rows
    # (GPU 268, network 42, host parts SSD 3 + power 3 + chassis 2 + IO board 2 + CPU 2 + memory 2 = 14)
    row = next(r for r in v.read_rows("open") if r["id"] == "crusoe-h200-infiniband-share")
    assert v.predict(reliability_table(), row, loo_ratio=0.0) == pytest.approx(42 / (268 + 42 + 14), rel=1e-9)
    # link failures per link-month: the network rows per node over Llama 3's 8 NIC links a node, 30.44 days a month
    link = {
        "id": "x",
        "source": "y",
        "quantity": "link_failures_frac_per_month",
        "accelerator": "",
        "numerator_rows": "llama3-network-switch-cable;llama3-nic",
    }
    hand = 42 / (2_048 * 54) / 8 * 365.25 / 12
    assert v.predict(reliability_table(), link, loo_ratio=0.0) == pytest.approx(hand, rel=1e-9)  # 0.145 % a month
    # the band: the figure within [predicted / u, predicted × u] (H100: u = 1.97, the HBM3 row measured)
    rt = reliability_table()
    assert v._in_band(rt, {"quantity": "mttf_h", "accelerator": "", "bound": "exact"}, 10.0, 5.1) is True
    assert v._in_band(rt, {"quantity": "mttf_h", "accelerator": "", "bound": "exact"}, 10.0, 5.0) is False
    assert v._in_band(rt, {"quantity": "share_frac", "accelerator": "", "bound": "exact"}, 0.1, 0.5) is None
    # a storage row: the storage kind's achieved share of its rated bandwidth; local NVMe has no measurement of its own
    # and borrows Tectonic's 2 of 7 TB/s (Llama 3 §3.3.1) = 0.286 of the rated read bandwidth
    nvme = {"id": "x", "source": "y", "quantity": "storage_read_efficiency_frac", "storage_kind": "local-nvme"}
    assert v.predict(rt, nvme, loo_ratio=0.0) == pytest.approx(0.286)
    with pytest.raises(SpecError, match="storage_kind"):
        v.predict(rt, {**nvme, "storage_kind": "tape"}, loo_ratio=0.0)


def test_bad_recovery_input_names_the_field() -> None:
    with pytest.raises(SpecError, match="burn_in_days"):
        _small_plan(cluster_age={"age_days": 10, "burn_in_ratio": 2})
    with pytest.raises(SpecError, match="restart_failure_prob"):
        _small_plan(restart_failure_prob=1.0)  # a chain that never succeeds
    with pytest.raises(SpecError, match="lemon_nodes"):
        _small_plan(lemon_nodes={"share_frac": 0.1, "rate_ratio": 10})  # exclude_after_count missing
    with pytest.raises(SpecError, match="day_end_hour"):
        _small_plan(human_response={"day_s": 60, "night_s": 600, "day_start_hour": 8, "day_end_hour": 25})
