"""What changed between two sets of cloud price rows (the shipped ones and those in use), per offer."""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.costing.prices import InstancePrice


@dataclass(frozen=True, kw_only=True, slots=True)
class OfferChange:
    """One offer (provider, instance, region, pricing kind) whose row in use is not the shipped one."""

    provider: str
    instance: str
    region: str
    pricing: str
    accelerator: str
    old: InstancePrice | None
    """The shipped row (None: an offer the shipped rows do not have)."""
    new: InstancePrice
    """The row in use (refreshed or from an overlay)."""

    @property
    def change_frac(self) -> float | None:
        """New over old price per accelerator-hour, minus one (None for a new offer)."""
        if self.old is None:
            return None
        return self.new.usd_per_accelerator_hour / self.old.usd_per_accelerator_hour - 1.0


def offer_changes(shipped: list[InstancePrice], current: list[InstancePrice]) -> list[OfferChange]:
    """Offers whose row in ``current`` is not their row in ``shipped``: re-priced or re-dated offers first (by
    provider, instance, region, pricing), then offers only ``current`` has."""
    old = {p.offer_key: p for p in shipped}
    out: list[OfferChange] = []
    for p in current:
        before = old.get(p.offer_key)
        if before is not None and before.id == p.id:
            continue
        out.append(
            OfferChange(
                provider=p.provider,
                instance=p.instance,
                region=p.region,
                pricing=p.pricing,
                accelerator=p.accelerator,
                old=before,
                new=p,
            )
        )
    return sorted(out, key=lambda c: (c.old is None, c.provider, c.instance.lower(), c.region, c.pricing))
