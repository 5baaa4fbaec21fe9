"""Domain planners below the application layer: training plan search, inference estimate, capacity, engine
profiles."""
