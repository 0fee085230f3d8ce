// SPDX-License-Identifier: Apache-2.0
// Many ERC-20 payouts in one transaction (issue 28), Disperse-style: the caller approves this contract once, and each
// batch pulls its total from the caller in one transferFrom, then sends every payout from here. A standing approval
// to it is safe: it only ever pulls from msg.sender, so nobody but the treasury can spend the treasury's allowance
// (Multicall3 would let anyone spend it). No owner, no storage, no events (the token's Transfer events say it all).
// All or nothing: a payout the token refuses (a blacklisted recipient) reverts the batch with the token's own reason.
// Compiled like TestUSDC.sol; ABI in src/chains/ethereum/batch-contract.ts, bytecode in
// src/devnet/batch-contract-bytecode.ts (recompile: see the header of that file).
pragma solidity 0.8.26;

contract BatchTransfer {
    // 1000 transfers to new holders cost about 30M gas, a whole Ethereum block: a longer batch might never be mined,
    // and a known bound keeps its worst-case gas (and what one refused payout takes down with it) known too.
    uint256 public constant MAX_RECIPIENTS = 1000;

    function batchTransfer(address token, address[] calldata recipients, uint256[] calldata amounts) external {
        uint256 count = recipients.length;
        require(count == amounts.length, "BatchTransfer: recipients and amounts differ in length");
        require(count != 0, "BatchTransfer: no recipients");
        require(count <= MAX_RECIPIENTS, "BatchTransfer: more than MAX_RECIPIENTS recipients");
        // A call to an address without code succeeds and returns nothing: it would look like a token that paid.
        require(token.code.length != 0, "BatchTransfer: token is not a contract");
        uint256 total = 0;
        for (uint256 i = 0; i < count; i++) total += amounts[i];
        callToken(token, abi.encodeWithSignature("transferFrom(address,address,uint256)", msg.sender, address(this), total));
        for (uint256 i = 0; i < count; i++) {
            callToken(token, abi.encodeWithSignature("transfer(address,uint256)", recipients[i], amounts[i]));
        }
    }

    /// Accepts a token that returns true and one that returns nothing (USDT); a refusal reverts with the token's data.
    function callToken(address token, bytes memory data) private {
        (bool ok, bytes memory returned) = token.call(data);
        if (!ok) {
            require(returned.length != 0, "BatchTransfer: token call reverted without a reason");
            assembly ("memory-safe") {
                revert(add(returned, 32), mload(returned))
            }
        }
        require(returned.length == 0 || abi.decode(returned, (bool)), "BatchTransfer: token call returned false");
    }
}
