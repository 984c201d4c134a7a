"""`loggp calibrate` says why each "no" row is so, in one line."""

from __future__ import annotations

import pytest

from loggp.measure.calibrate import Measured, compare
from loggp.measure.explain import explanations
from loggp.metrics.node import OtherWork
from loggp.plan.knobs import KnobSet

pytestmark = pytest.mark.unit


def measured(**us: float) -> Measured:
    g_per_b = us.pop("G", 0.1)
    return Measured.model_validate(
        {**{k: {"median": v} for k, v in us.items()}, "G_ns_per_B": {"value": g_per_b}}
    )


# tcp;ofi_rxm on loopback, bare: the provider's socket writes inside fi_send
BARE = measured(half_rtt_us=6.4, o_s_us=4.47, o_r_us=1.3, g_us=5.0, L_us=0.63)


def test_a_deferred_send_explains_o_s_and_l_and_o_r_its_two_modes() -> None:
    """The README's example, `--latency 20us` over tcp;ofi_rxm: four rows of six said no."""
    knobs = KnobSet.parse({"latency": "20us"})
    shim = measured(half_rtt_us=26.5, o_s_us=0.20, o_r_us=2.9, g_us=5.1, L_us=24.9)
    comparisons = compare(knobs, BARE, shim)
    why = explanations(comparisons, knobs.params(), "tcp;ofi_rxm")
    assert (
        set(why)
        == {c.metric.key for c in comparisons if not c.ok}
        == {
            "o_s_us",
            "o_r_us",
            "L_us",
        }
    )
    assert why["o_s_us"].startswith("o_s: 4.47 -> 0.20 us (-4.27, configured +0.00): the shim ")
    assert "defers the send" in why["o_s_us"] and "outside the timed call" in why["o_s_us"]
    assert "takes the 4.27 us of send cost that left the timed send call" in why["L_us"]
    assert "moves between the two modes" in why["o_r_us"]
    assert all("\n" not in line for line in why.values())


def test_what_the_semantics_do_not_explain_is_set_against_the_hosts_other_work() -> None:
    knobs = KnobSet.parse({"overhead": "10us"})
    shim = measured(half_rtt_us=40.0, o_s_us=14.5, o_r_us=11.3, g_us=5.0, L_us=0.6)
    comparisons = compare(knobs, BARE, shim)

    def reason(other: OtherWork | None) -> str:
        why = explanations(comparisons, knobs.params(), "tcp;ofi_rxm", other)
        assert list(why) == ["half_rtt_us"]
        return why["half_rtt_us"]

    assert reason(OtherWork(0.72, 3.0)).endswith(
        "the host was 72 % busy with other work during the runs, which moves medians by "
        "microseconds: rerun while the host is idle"
    )
    assert "a shim error to report" in reason(OtherWork(0.02, 0.1))
    assert "other work was not measured" in reason(None)


def test_a_gap_below_the_stacks_own_hides_in_it() -> None:
    knobs = KnobSet.parse({"gap": "2us"})
    shim = measured(half_rtt_us=6.4, o_s_us=0.2, o_r_us=1.3, g_us=5.0, L_us=4.9)
    why = explanations(compare(knobs, BARE, shim), knobs.params(), "tcp;ofi_rxm")
    assert "hides in it, as behind a slower NIC" in why["g_us"]
    assert "defers the send" in why["o_s_us"]
