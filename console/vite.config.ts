import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the Podium server at /console/ (see src/modules/session/console-static.ts).
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
});
