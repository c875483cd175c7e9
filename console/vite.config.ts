import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the Podium server at /console/ (see src/modules/session/console-static.ts).
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  // Into the build output, beside the compiled server (served from dist/console).
  build: { outDir: '../dist/console', emptyOutDir: true },
});
