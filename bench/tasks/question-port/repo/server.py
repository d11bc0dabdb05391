import argparse
import http.server

DEFAULT_PORT = 8765


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = parser.parse_args()
    http.server.HTTPServer(("127.0.0.1", args.port), http.server.SimpleHTTPRequestHandler).serve_forever()


if __name__ == "__main__":
    main()
