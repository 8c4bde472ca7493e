# scripts
