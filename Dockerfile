# Multi-stage build of the `uttt` server. Kept in step with the README's
# configuration table by hand (no Docker engine runs where this is developed).
# UTTT_JWT_SECRET has no default here on purpose: pass it at run time (the
# server refuses to start with a placeholder or a secret under 32 bytes).
# The data folder is the owner's only (0700); the server keeps it so.
FROM rust:1.95-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY migrations ./migrations
COPY openapi ./openapi
COPY web ./web
COPY benches ./benches
RUN cargo build --release --locked --bin uttt

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates libssl3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /var/lib/uttt --create-home uttt \
    && chmod 0700 /var/lib/uttt
COPY --from=build /src/target/release/uttt /usr/local/bin/uttt
USER uttt
WORKDIR /var/lib/uttt
ENV UTTT_BIND=0.0.0.0:8080 \
    UTTT_DATA_DIR=/var/lib/uttt \
    UTTT_LOG_FORMAT=json
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["uttt", "healthcheck"]
ENTRYPOINT ["uttt"]
CMD ["serve"]
