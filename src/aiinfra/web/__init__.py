"""The local web app and HTTP API (``aiinfra web``): pages and ``/api/v1`` over the application layer.

FastAPI, uvicorn and plotly are imported only here (the CLI's other commands never load them).
``create_app()`` builds the ASGI app; nothing here imports ``aiinfra.commands``: every answer comes from
:mod:`aiinfra.app`, as the CLI's do.
"""
