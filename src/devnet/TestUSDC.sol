// SPDX-License-Identifier: Apache-2.0
// The USDC stand-in the local devnet deploys: a 6-decimal ERC-20 whose owner (the deployer) can mint.
// Compiled with solc 0.8.26 (optimizer 200 runs, evmVersion paris so it runs on any EVM chain, no PUSH0);
// the bytecode and ABI live in src/devnet/usdc-token.ts. Recompile: see the header of that file.
pragma solidity 0.8.26;

contract TestUSDC {
    string public constant name = "USD Coin (devnet)";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor() {
        owner = msg.sender;
    }

    function mint(address to, uint256 value) external returns (bool) {
        require(msg.sender == owner, "TestUSDC: caller is not the owner");
        require(to != address(0), "TestUSDC: mint to the zero address");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "TestUSDC: insufficient allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0), "TestUSDC: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "TestUSDC: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
