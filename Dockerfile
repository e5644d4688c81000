# mltd: the service (`mltd serve`) by default, the CLI and `mltd worker` from the same image.
#   docker build -t mltd .                                        # CPU (slim)
#   docker build -t mltd:cuda --build-arg TORCH_INDEX=https://pypi.org/simple .  # CUDA
# The CUDA variant differs only in the torch wheels: PyPI's torch for Linux x86_64 *is* the CUDA
# build (the CUDA libraries come as nvidia-* wheels; torch 2.13.0 is there for cp311, ~530 MB),
# while the whl/cu124 index this image used to name has no 2.13 build. The driver comes from
# the host through the NVIDIA container toolkit: `docker run --gpus all`.
# No secrets are baked in: tokens and keys come from the environment at run time.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
# the log scanner is a C extension: compiled here, the compiler stays behind
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY analysis analysis
COPY bot bot
COPY handlers handlers
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
# CPU-only wheels (2.13.0+cpu); TORCH_INDEX=https://pypi.org/simple for the CUDA build
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0
RUN useradd --create-home --uid 10001 mltd
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --index-url "${TORCH_INDEX}" "torch==${TORCH_VERSION}" \
 && pip install --no-cache-dir "$(ls /wheels/mltd-*.whl)[all]" \
 && rm -rf /wheels
USER 10001
WORKDIR /home/mltd
ENV MLTD_DATABASE_URL=sqlite:////home/mltd/mltd.db \
    MLTD_QUEUE_URL=sqlite:////home/mltd/mltd-queue.db \
    PYTHONUNBUFFERED=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
CMD ["mltd", "serve", "--host", "0.0.0.0", "--port", "8000"]
