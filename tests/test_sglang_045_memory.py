"""SGLang 0.4.5.x's default --mem-fraction-static by tensor-parallel size (sglang 0.4.5.post1 wheel,
ServerArgs.__post_init__: 0.79 from tp 16, 0.81 from 8, 0.85 from 4, 0.87 from 2, else 0.88; engines.yaml
mem_fraction_by_version), against the later reserved-memory rule the profile keeps for other releases."""

from __future__ import annotations

import pytest

from aiinfra import catalog

H200_BYTES = 141e9


@pytest.mark.parametrize(("tp", "frac"), [(16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88)])
def test_sglang_045_takes_its_table_by_tp(tp: int, frac: float) -> None:
    sg = catalog.engine("sglang")
    assert sg.static_memory_fraction(H200_BYTES, tp, tp, (0, 4, 5)) == pytest.approx(frac)


def test_other_releases_keep_the_reserved_memory_rule() -> None:
    # the rule of the profile (469c63e): H200 141e9 B = 134,468 MiB; reserved = 512 + 8,192 x 1.5 + 512 x 2 + 8 x 128
    # = 14,848 MiB (above the 10,240 floor) -> (134,468 - 14,848) / 134,468 = 0.890
    sg = catalog.engine("sglang")
    for version in (None, (0, 4, 6), (0, 5, 7)):
        assert sg.static_memory_fraction(H200_BYTES, 8, 8, version) == pytest.approx(0.890, abs=0.0015)


def test_the_kv_pool_is_what_the_fraction_leaves_after_the_weights() -> None:
    # fraction x memory - weights: 0.81 x 141e9 - 84e9 = 30.21e9 B at tp 8
    sg = catalog.engine("sglang")
    kv = sg.kv_cache_bytes(
        memory_bytes=H200_BYTES,
        weights_bytes=84e9,
        activation_bytes=0.0,
        reserve_bytes=0.0,
        util_frac=0.9,
        ranks=8,
        tp=8,
        version=(0, 4, 5),
    )
    assert kv == pytest.approx(30.21e9)
