# pullfleet-controller image, built from this package:
#   docker build -t ghcr.io/pullfleet/pullfleet-controller:0.1.0 .
# The controller runs its TypeScript sources through tsx (a runtime dependency), as a non-root user,
# and needs no writable root filesystem (the install mounts an emptyDir on /tmp).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    TSX_DISABLE_CACHE=1
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin/pullfleet-controller.js ./bin/
COPY src/model ./src/model
COPY src/controller ./src/controller
# 65532: the conventional "nonroot" uid; the Deployment also enforces runAsNonRoot.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "bin/pullfleet-controller.js"]
