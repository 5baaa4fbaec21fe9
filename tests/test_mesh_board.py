"""A switchless 4-GPU board (HGX H100 4-GPU): its pairs' links bound the scale-up collectives (hand calculations from
the catalog rows: an H100's 18 NVLink 4 links at 450 GB/s one way, six to each peer, at nvlink-4's measured 0.88)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aiinfra.analytic.comms import collective_time, mesh_floor_s
from aiinfra.analytic.inference import InferenceModel
from aiinfra.analytic.step_time import StepBatch
from aiinfra.app.tables import row_tables
from aiinfra.catalog import model
from aiinfra.catalog.resolve import cluster_for
from aiinfra.validation.inference_rows import predict_row

H100 = "nvidia-h100-sxm5-80gb"
MESH = "hgx-h100-4gpu"
PEER_BW = 450e9 * 6 / 18 * 0.88  # one pair's six links of eighteen, at the measured pairwise efficiency
ROWS = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data" / "inference_serving5_open.csv"


def test_board_resolves_to_a_four_gpu_domain_without_nvls() -> None:
    c = cluster_for(H100, 4, MESH)
    assert (c.per_node, c.scale_up_domain, c.nvls, c.system_id) == (4, 4, False, MESH)
    assert c.scale_up_peer_bw_one_way_bytes_per_s == pytest.approx(132e9)
    assert c.scale_up_peer_bw_one_way_bytes_per_s == pytest.approx(PEER_BW)
    switched = cluster_for(H100, 4)
    assert switched.scale_up_peer_bw_one_way_bytes_per_s is None and switched.scale_up_domain == 8


def test_floor_by_collective() -> None:
    c = cluster_for(H100, 4, MESH)
    s = 64 * 2**20
    # all-reduce: 2(n-1)/n · S per rank over its n − 1 peers' links
    assert mesh_floor_s(c, "allreduce", s, 2) == pytest.approx(s / PEER_BW)
    assert mesh_floor_s(c, "allreduce", s, 4) == pytest.approx(2 * 0.75 * s / (3 * PEER_BW))
    assert mesh_floor_s(c, "allgather", s, 4) == pytest.approx(0.75 * s / (3 * PEER_BW))
    assert mesh_floor_s(c, "p2p", s, 2) == pytest.approx(s / PEER_BW)
    assert mesh_floor_s(c, "alltoall", s, 4) == pytest.approx(s / 4 / PEER_BW)
    assert mesh_floor_s(cluster_for(H100, 4), "allreduce", s, 2) == 0.0  # switched: no floor


def test_pair_all_reduce_is_slower_on_the_mesh_only_where_bandwidth_counts() -> None:
    mesh, switched = cluster_for(H100, 4, MESH), cluster_for(H100, 4)
    big = 64 * 2**20
    t_mesh = collective_time(mesh, "allreduce", big, 2).time_s
    assert t_mesh >= big / PEER_BW
    assert t_mesh > collective_time(switched, "allreduce", big, 2).time_s
    small = 16 * 2**10  # latency-bound: the measured curve, not the links, sets it
    assert collective_time(mesh, "allreduce", small, 2).time_s == pytest.approx(
        collective_time(switched, "allreduce", small, 2).time_s
    )


def test_tp2_step_pays_the_pair_links() -> None:
    llama = model("meta-llama-3.1-70b")
    batch = StepBatch(prefill_tokens=4096, prefill_attention_pairs=4096 * 2048.5, prefill_seqs=1)

    def step(system: str | None) -> tuple[float, float]:
        im = InferenceModel(model=llama, cluster=cluster_for(H100, 2, system), tp=2, weight_precision="fp8")
        bd = im.breakdown(batch)
        return bd.time_s, bd.communication_s

    (t_mesh, c_mesh), (t_sw, c_sw) = step(MESH), step(None)
    # 2 all-reduces per layer of the step's activations, each at least S over one pair's links
    message = 4096 * 8192 * 2
    assert c_mesh >= 2 * 80 * message / PEER_BW * (1 - 1e-9)
    assert c_mesh > c_sw and t_mesh - t_sw == pytest.approx(c_mesh - c_sw)


def test_a_row_that_names_the_board_is_priced_on_it() -> None:
    rows = [r for r in csv.DictReader(ROWS.open()) if r.get("system") == MESH and r["mode"] == "offline"]
    assert rows, "the MLPerf 4-GPU H100 offline rows state their board"
    row = rows[0]
    on_board = predict_row(row, row_tables())
    assert f"system {MESH}" in on_board.reason
    switched = predict_row({**row, "system": ""}, row_tables())
    assert on_board.predicted is not None and switched.predicted is not None
    assert on_board.predicted < switched.predicted  # tp 2 on the pair's links: a slower step, fewer tokens/s


def test_capacity_prices_the_scenarios_own_part_on_its_board() -> None:
    from aiinfra.catalog.resolve import load_scenario
    from aiinfra.planning.capacity import own_system

    example = Path(__file__).resolve().parents[1] / "examples" / "infer-llama3.1-70b-h100.yaml"
    on_board = load_scenario(example, ["hardware.system=hgx-h100-4gpu", "hardware.count=4"])
    assert own_system(on_board, H100) == MESH
    assert own_system(on_board, "nvidia-h200-sxm-141gb") is None  # another candidate: its usual system
    assert own_system(load_scenario(example, []), H100) is None  # switched: nothing to carry over
