"""The local web app and HTTP API (``aiinfra web``): pages and ``/api/v1`` over the application layer.

Needs the ``web`` extra (FastAPI, uvicorn, plotly). ``create_app()`` builds the ASGI app; nothing here imports
``aiinfra.commands``: every answer comes from :mod:`aiinfra.app`, as the CLI's do.
"""
