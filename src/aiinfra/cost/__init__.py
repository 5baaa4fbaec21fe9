"""Prices, energy and carbon, datacenter sizing (racks, fabric), TCO."""
