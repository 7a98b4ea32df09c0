import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Served under /page/ by tests/agui_graph.py's app (the AG-UI endpoints' origin).
export default defineConfig({ base: "/page/", plugins: [react()] });
