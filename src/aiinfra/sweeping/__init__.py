"""Machinery of ``aiinfra sweep`` below the application layer (aiinfra/app/sweep.py, the only importer).

- grid.py     ``KEY=V1,V2`` axes -> the lazy cartesian (and zipped) product of points; each point's identity hash
- store.py    the results directory: part files written atomically as rows arrive, resume, compaction, reading
              as one table with one type per column
- backends.py serial, local process pool and Ray: chunks of points mapped with bounded work in flight
- pareto.py   the Pareto front of two columns (its plot: aiinfra/report/plots.py pareto_plot)
"""
