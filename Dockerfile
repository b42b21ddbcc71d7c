# Multi-stage build of Couler's binaries. Later stages add couler-api and
# couler-scheduler; each ships in the same slim runtime image.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p couler-cli \
    && mkdir -p /out && cp target/release/couler /out/

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 couler
COPY --from=builder /out/couler /usr/local/bin/couler
COPY examples /usr/share/couler/examples
USER couler
ENTRYPOINT ["couler"]
CMD ["validate", "/usr/share/couler/examples/diamond.yaml"]
