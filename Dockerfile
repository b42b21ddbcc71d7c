# syntax=docker/dockerfile:1
# One image for every Couler process: `couler-api` (the default command),
# `couler-scheduler` and the `couler` CLI, with the web portal embedded in
# couler-api. Built and run by docker-compose.yml and deploy/kubernetes;
# `scripts/check-deploy` checks that what they run is what this builds.
#
#   docker build -t couler:dev .                    # the runtime image
#   docker build --target airflow -t couler-airflow:dev .   # compose's `airflow` profile

# The portal's assets (portal/dist). couler-api embeds them at compile time.
FROM node:22-bookworm-slim AS portal
WORKDIR /src
COPY openapi/openapi.json openapi/
COPY portal/package.json portal/package-lock.json portal/
RUN cd portal && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
COPY portal portal
RUN cd portal && npm run build

# The three binaries. Queries are checked against the committed .sqlx/ data,
# so no database is needed here.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
COPY --from=portal /src/portal/dist portal/dist
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    SQLX_OFFLINE=true cargo build --release --locked -p couler-cli -p couler-api -p couler-scheduler \
    && mkdir -p /out \
    && cp target/release/couler target/release/couler-api target/release/couler-scheduler /out/

# Apache Airflow 3 as the tests run it (scripts/airflow-standalone: the
# LocalExecutor, BashOperator steps), for compose's `airflow` profile.
FROM python:3.11-slim-bookworm AS airflow
RUN useradd --uid 10001 --home-dir /var/lib/airflow --create-home couler \
    && mkdir -p /var/lib/airflow/home /var/lib/airflow/dags /var/lib/airflow/data \
    && chown -R couler:couler /var/lib/airflow
WORKDIR /opt/couler
COPY scripts/airflow-standalone scripts/validate-airflow scripts/
RUN scripts/validate-airflow --setup && chown -R couler:couler .tools
USER couler
EXPOSE 8080
CMD ["/opt/couler/scripts/airflow-standalone", "/var/lib/airflow/home", "8080", "/var/lib/airflow/dags"]

# The runtime. bubblewrap is the local engine's step sandbox (see
# docs/design/local-sandbox.md). Unprivileged, as here, it needs the
# container runtime to allow user namespaces and a fresh /proc: Docker's
# default seccomp and AppArmor profiles and its masked /proc paths refuse
# both, so the compose file runs the scheduler with
# `security_opt: [seccomp=unconfined, apparmor=unconfined, systempaths=unconfined]`
# (Kubernetes: see deploy/kubernetes/overlays/dev). Without them the
# scheduler still starts and its local-engine steps fail, saying why;
# Argo, Tekton, Airflow and KFP runs are unaffected. Kernel limits
# (cgroups) are not delegated to containers, so the local engine's limits
# are advisory there and it says so at start. `network = "host"` for steps
# needs root and nftables: not in this image.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl bubblewrap tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/couler --create-home couler \
    && mkdir -p /var/lib/airflow/dags /var/lib/airflow/data \
    && chown -R couler:couler /var/lib/airflow
COPY --from=build /out/couler /out/couler-api /out/couler-scheduler /usr/local/bin/
COPY examples /usr/share/couler/examples
USER couler
WORKDIR /var/lib/couler
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["curl", "-fsS", "--max-time", "2", "-o", "/dev/null", "http://127.0.0.1:8080/healthz"]
# tini is the container's PID 1: a sandbox whose bubblewrap was killed
# (a cancelled or timed-out step) leaves its init to be reaped by PID 1,
# which a Couler binary would not do. Compose's `command` and the
# manifests' `args` keep this entrypoint.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["couler-api", "serve"]
