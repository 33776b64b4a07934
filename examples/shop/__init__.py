"""A small shop API in two versions sharing its data and templates: Flask (flask_app) and FastAPI
(fastapi_app). See examples/README.md."""
