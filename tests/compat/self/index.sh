#!/usr/bin/env bash
# Echoes the params it received (JSON on stdin) as its result.
cat
