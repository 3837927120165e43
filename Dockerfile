# pgpoolcheck in a container: scan, analyze, gate and the proxy.
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" -t pgpoolcheck .
#   docker run --rm -v "$PWD:/src" pgpoolcheck scan .
# docs/container.md says how to write a baseline and how to run the proxy.
# The build stage compiles with cgo (libpg_query); the image runs it on a
# slim Debian as an unprivileged user (uid 10001).
FROM golang:1.26-bookworm AS build
# VERSION is what --version prints; without it, "dev".
ARG VERSION=""
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w -X github.com/pgpoolcheck/pgpoolcheck/internal/version.Version=${VERSION}" -o /out/pgpoolcheck ./cmd/pgpoolcheck \
    && /out/pgpoolcheck --version

FROM debian:bookworm-slim
# ca-certificates: the system CAs, for an upstream with sslmode=verify-full.
# git: scan honours .gitignore through git check-ignore; a mounted
# repository belongs to another uid than the image's user, which git
# refuses unless the directory is marked safe.
# /src (the working directory) belongs to the image's user, so that a
# baseline can be written there when nothing is mounted over it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*' \
    && groupadd --system --gid 10001 pgpoolcheck \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin pgpoolcheck \
    && mkdir -p /src /etc/pgpoolcheck \
    && chown 10001:10001 /src
COPY --from=build /out/pgpoolcheck /usr/local/bin/pgpoolcheck
USER 10001
WORKDIR /src
EXPOSE 6432
ENTRYPOINT ["pgpoolcheck"]
CMD ["--help"]
