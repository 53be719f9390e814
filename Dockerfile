# winlint: multi-stage build of a static (musl) binary into a distroless, non-root image.
#
#   DOCKER_BUILDKIT=1 docker build -t winlint .     (context filtered by Dockerfile.dockerignore)
#   docker run --rm winlint --help
#
# Stage 1: build. rustls uses ring (no aws-lc, no cmake/nasm), so musl needs only musl-tools.
FROM rust:1.95-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --target x86_64-unknown-linux-musl --bin winlint \
 && cp target/x86_64-unknown-linux-musl/release/winlint /winlint

# Stage 2: nothing but the binary and CA roots; uid 65532 ("nonroot"), read-only root FS friendly.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /winlint /usr/local/bin/winlint
USER 65532:65532
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/winlint"]
CMD ["serve", "--tls-cert", "/tls/tls.crt", "--tls-key", "/tls/tls.key", "--metrics-listen", "0.0.0.0:9090"]
