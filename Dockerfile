# Podium from the release artifact: `npm run release` first, then
#   docker build -t podium .
# The image installs release/podium-<version>.tgz exactly as test/release.test.ts does (unpacked,
# `npm install --omit=dev`), so what CI proves on every run is what runs here.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY release/podium-*.tgz /tmp/podium.tgz
RUN tar xzf /tmp/podium.tgz --strip-components=1 \
 && rm /tmp/podium.tgz \
 && npm install --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p /app/data && chown node:node /app/data
USER node
ENV HOST=0.0.0.0 PORT=3000 PODIUM_DATA_DIR=/app/data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD node -e "fetch('http://127.0.0.1:3000/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# `podium serve` applies pending migrations at start; `docker compose run podium migrate` runs them alone.
ENTRYPOINT ["node", "bin/podium.js"]
CMD ["serve"]
