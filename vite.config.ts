import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// SharedArrayBuffer (the live simulator) needs cross-origin isolation on every server.
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  plugins: [react()],
  server: { headers: isolation, port: 5173 },
  preview: { headers: isolation, port: 4173, strictPort: true },
  worker: { format: 'es' },
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
  },
});
