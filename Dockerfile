# lexkb serve: the wheel with its extra `serve` (the service's libraries), no build libraries
# (README, "A query-only install"). The index is mounted read-only at /index; the store of keys,
# feedback and conversations lives in the volume /data.
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml uv.lock README.md ./
COPY lexkb ./lexkb
COPY lexkb_service ./lexkb_service
COPY hatch_build.py ./
# A C compiler for the keyword ranking's kernel (hatch_build.py); the image below needs none.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install --no-cache-dir uv==0.13.9 && uv build --wheel -o /dist

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir "$(ls /dist/*.whl)[serve]" && rm -r /dist \
    && useradd --system --home-dir /data --create-home lexkb
USER lexkb
VOLUME ["/data"]
EXPOSE 8000
# Off loopback every API request needs a key: add one with
#   docker run ... lexkb-serve lexkb serve keys add NAME --store /data/store.db
CMD ["lexkb", "serve", "--index", "/index", "--store", "/data/store.db", "--host", "0.0.0.0", "--port", "8000"]
