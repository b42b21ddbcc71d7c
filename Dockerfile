# Multi-stage build of Couler's binaries (couler, couler-api; the scheduler
# joins when it lands), all shipped in one slim runtime image.
FROM rust:1.95-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    SQLX_OFFLINE=true cargo build --release --locked -p couler-cli -p couler-api \
    && mkdir -p /out && cp target/release/couler target/release/couler-api /out/

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 couler
COPY --from=builder /out/couler /out/couler-api /usr/local/bin/
COPY examples /usr/share/couler/examples
USER couler
EXPOSE 8080
CMD ["couler-api", "serve"]
