# pullfleet-controller image, built from this package's compiled output. Tag it with the package version,
# which is also the default tag of the ControllerInstall construct (npm run image does both):
#   docker build -t ghcr.io/pullfleet/pullfleet-controller:$(node -p "require('./package.json').version") .
# The runtime stage holds lib/ and production dependencies only (no TypeScript compiler, tsx, cdk8s or
# cdk8s-cli), runs as a non-root user and writes nothing to its root filesystem.

# 1. Compile: every dependency, then tsc into lib/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY imports ./imports
RUN npm run build

# 2. The controller's runtime dependencies: production ones minus what only `pullfleet synth` runs
#    (tsx, typescript, cdk8s-cli) and the peer dependencies (cdk8s, constructs: the controller never
#    loads the constructs).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --omit=peer --ignore-scripts \
 && npm pkg delete dependencies.tsx dependencies.typescript dependencies.cdk8s-cli \
 && npm prune --omit=dev --omit=peer --ignore-scripts \
 && npm cache clean --force

# 3. Runtime: node lib/src/controller/main.js through the package's bin entry (no src/ here, so the
#    bin runs the compiled controller).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./
COPY bin/pullfleet-controller.js ./bin/
COPY --from=build /app/lib ./lib
# 65532: the conventional "nonroot" uid; the Deployment also enforces runAsNonRoot.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "bin/pullfleet-controller.js"]
