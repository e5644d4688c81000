# CPU image for the command line; the service image (multi-stage, CUDA variant) comes with deploy work.
FROM python:3.11-slim
RUN useradd --create-home mltd
WORKDIR /app
COPY pyproject.toml README.md ./
COPY analysis analysis
COPY bot bot
COPY handlers handlers
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install --no-cache-dir .
USER mltd
ENTRYPOINT ["mltd"]
CMD ["--help"]
