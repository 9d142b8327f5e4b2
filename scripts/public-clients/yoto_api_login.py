"""The Python client yoto_api's own device login, pointed at a Cardshelf (yoto_api_redirect).

    CARDSHELF_URL=... python yoto_api_login.py CLIENT_ID

Prints the device authorisation as a JSON line (for a person, or a test, to approve at
/activate), waits for the client's own polling to finish, then prints its tokens as a second
JSON line. Used by scripts/public-clients-sign-in.js.
"""

import asyncio
import json
import sys

import yoto_api_redirect  # noqa: F401  (before the client reads its URLs)
from yoto_api import YotoClient


async def main(client_id: str) -> None:
    client = YotoClient(client_id=client_id)
    try:
        authorisation = await client.device_code_flow_start()
        print(json.dumps(authorisation), flush=True)
        await client.device_code_flow_complete(authorisation)
        print(json.dumps({"access_token": client.token.access_token, "refresh_token": client.token.refresh_token}), flush=True)
    finally:
        await client.close()


asyncio.run(main(sys.argv[1]))
