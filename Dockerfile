# pgpoolcheck in a container: scan, analyze, gate and the proxy.
#   docker build -t pgpoolcheck .
#   docker run --rm -v "$PWD:/src" pgpoolcheck scan /src
# The build stage compiles with cgo (libpg_query); the image runs it on a
# slim Debian as an unprivileged user.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/pgpoolcheck ./cmd/pgpoolcheck \
    && /out/pgpoolcheck --version

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin pgpoolcheck
COPY --from=build /out/pgpoolcheck /usr/local/bin/pgpoolcheck
USER 10001
WORKDIR /src
EXPOSE 6432
ENTRYPOINT ["pgpoolcheck"]
CMD ["--help"]
