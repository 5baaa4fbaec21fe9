"""Published measurements -> predicted vs measured (``aiinfra validate``)."""
