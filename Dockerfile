# CPU image for the command line; the service image (CUDA variant) comes with deploy work.
# The log scanner is a C extension: it is compiled in the first stage, which the image leaves behind.
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY analysis analysis
COPY bot bot
COPY handlers handlers
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home mltd
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER mltd
ENTRYPOINT ["mltd"]
CMD ["--help"]
